/**
 * The rollup broken down by key or by model (`GET /v1/usage?group_by=key|model`; docs/decisions.md, "Usage by key
 * and model, paging, export"). Each group carries the rollup's own figures, so the groups of a window sum exactly to
 * its rollup. By key, a run and all its figures belong to the key that created it (null: a console session). By
 * model, what a call did belongs to the call's model (its tokens and cost: settled for a settled run, unsettled for
 * one still pending), and what a run is (its count by state, its hold) belongs to the model of its last call (by call
 * index): each run counts once, however many models it called; a run without any call is in the null group.
 */
import { Result } from "effect"
import type { SqlClient } from "effect/sql"
import { InvalidParameter } from "../../schema/Errors.js"
import type { Window } from "./Window.js"

/** Totals of the runs created in a window. */
export interface RollupRow {
  readonly total: number
  readonly completed: number
  readonly failed: number
  readonly in_flight: number
  readonly input_tokens: number
  readonly output_tokens: number
  readonly settled_micros: number
  readonly reserved_micros: number
  readonly unsettled_micros: number
}

/** What the rollup is grouped by. */
export type GroupBy = "key" | "model"

/** One group's figures: the rollup's, for the group's runs and calls. */
export interface GroupRow extends RollupRow {
  /** The key or model id; null for console sessions' runs (by key) or runs without a call (by model). */
  readonly group_id: string | null
}

/** The `group_by` of a rollup query: none when absent, `invalid_parameter` for anything but `key` or `model`. */
export const parseGroupBy = (value: string | undefined): Result.Result<GroupBy | null, InvalidParameter> =>
  value === undefined
    ? Result.succeed(null)
    : value === "key" || value === "model"
    ? Result.succeed(value)
    : Result.fail(new InvalidParameter({ message: "group_by must be key or model" }))

/** The grouped rollup statements over a SQL client; groups come largest settled spend first, then by id. */
export const groupStatements = (sql: SqlClient.SqlClient) => {
  const from = (window: Window) => window.start.toISOString()
  const to = (window: Window) => window.end.toISOString()
  return {
    key: (organizationId: string, window: Window) =>
      sql<GroupRow>`SELECT r.key_id AS group_id, count(*) AS total,
          count(*) FILTER (WHERE r.state = 'completed') AS completed,
          count(*) FILTER (WHERE r.state = 'failed') AS failed,
          count(*) FILTER (WHERE r.state = 'pending') AS in_flight,
          COALESCE(sum(r.input_tokens), 0)::bigint AS input_tokens,
          COALESCE(sum(r.output_tokens), 0)::bigint AS output_tokens,
          COALESCE(sum(r.cost_micros) FILTER (WHERE r.state <> 'pending'), 0)::bigint AS settled_micros,
          COALESCE(sum(r.hold_micros) FILTER (WHERE r.held), 0)::bigint AS reserved_micros,
          COALESCE(sum(u.cost_micros), 0)::bigint AS unsettled_micros
        FROM runs r
        LEFT JOIN LATERAL (
          SELECT sum(l.cost_micros) AS cost_micros FROM ledger_entries l WHERE r.state = 'pending' AND l.run_id = r.id
        ) AS u ON true
        WHERE r.organization_id = ${organizationId}
          AND r.created_at >= ${from(window)}::timestamptz AND r.created_at < ${to(window)}::timestamptz
        GROUP BY r.key_id
        ORDER BY settled_micros DESC, group_id ASC NULLS LAST`,
    model: (organizationId: string, window: Window) =>
      sql<GroupRow>`WITH window_runs AS MATERIALIZED (
          SELECT r.id, r.state, r.held, r.hold_micros FROM runs r
          WHERE r.organization_id = ${organizationId}
            AND r.created_at >= ${from(window)}::timestamptz AND r.created_at < ${to(window)}::timestamptz
        ), parts AS (
          SELECT (SELECT l.model_id FROM ledger_entries l WHERE l.run_id = w.id ORDER BY l.call_index DESC LIMIT 1)
              AS group_id,
            1 AS total, (w.state = 'completed')::int AS completed, (w.state = 'failed')::int AS failed,
            (w.state = 'pending')::int AS in_flight, 0 AS input_tokens, 0 AS output_tokens, 0 AS settled_micros,
            CASE WHEN w.held THEN w.hold_micros ELSE 0 END AS reserved_micros, 0 AS unsettled_micros
          FROM window_runs w
          UNION ALL
          SELECT l.model_id, 0, 0, 0, 0,
            CASE WHEN w.state <> 'pending' THEN l.input_tokens ELSE 0 END,
            CASE WHEN w.state <> 'pending' THEN l.output_tokens ELSE 0 END,
            CASE WHEN w.state <> 'pending' THEN l.cost_micros ELSE 0 END, 0,
            CASE WHEN w.state = 'pending' THEN l.cost_micros ELSE 0 END
          FROM window_runs w JOIN ledger_entries l ON l.run_id = w.id
        )
        SELECT group_id, sum(total)::bigint AS total, sum(completed)::bigint AS completed,
          sum(failed)::bigint AS failed, sum(in_flight)::bigint AS in_flight,
          sum(input_tokens)::bigint AS input_tokens, sum(output_tokens)::bigint AS output_tokens,
          sum(settled_micros)::bigint AS settled_micros, sum(reserved_micros)::bigint AS reserved_micros,
          sum(unsettled_micros)::bigint AS unsettled_micros
        FROM parts
        GROUP BY group_id
        ORDER BY settled_micros DESC, group_id ASC NULLS LAST`
  }
}

const Figures = [
  "total",
  "completed",
  "failed",
  "in_flight",
  "input_tokens",
  "output_tokens",
  "settled_micros",
  "reserved_micros",
  "unsettled_micros"
] as const

/** The rollup of a window as the sum of its groups (zeros when it has none). */
export const totalOf = (groups: ReadonlyArray<GroupRow>): RollupRow => {
  const total: Record<(typeof Figures)[number], number> = Object.create(null)
  for (const figure of Figures) total[figure] = groups.reduce((sum, group) => sum + group[figure], 0)
  return total
}
