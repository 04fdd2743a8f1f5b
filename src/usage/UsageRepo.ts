/**
 * The usage routes' reads of runs and ledger entries (the runs feature writes them; this module only reads). Every
 * query starts from the organization and a range of an indexed timestamp, so its cost follows the rows of the
 * window, not the organization's history: totals range over `runs.created_at` (an index-only scan of runs_usage,
 * migration 0006), the daily series does the same once per UTC day (no sort, no hash, zero-filled), the ledger over
 * `ledger_entries.created_at` (ledger_entries_newest, newest first under the limit), a run's calls over
 * ledger_entries_run. The ledger filtered by key reads ledger_entries_key_newest (migration 0009), and its pages go
 * by offset or by keyset, `(created_at, id) < (at, id)`: a range of the same index, whatever the depth. The groups
 * of the rollup are UsageGroups.ts's. `usageStatements` exposes the exact statements, so the plans test and bench
 * explain them.
 */
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { DatabaseUnavailable } from "../../schema/Errors.js"
import { orUnavailable } from "../db/Unavailable.js"
import { keysetAtSql } from "../runs/RunView.js"
import { type LedgerQuery, WholeLedger } from "./LedgerPaging.js"
import { type GroupBy, type GroupRow, groupStatements, type RollupRow } from "./UsageGroups.js"
import { utcDays, type Window } from "./Window.js"

export type { RollupRow } from "./UsageGroups.js"

/** One model call. */
export interface LedgerRow {
  readonly run_id: string
  readonly retry_ordinal: number
  readonly provider: string
  readonly model_id: string
  readonly provider_request_id: string | null
  readonly status: "succeeded" | "failed"
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cost_micros: number
  readonly created_at: Date
  /** The API key whose run made the call; null for a console session's run. */
  readonly key_id: string | null
}

/** A model call read from the ledger, with its position (its id, and `created_at` to the microsecond). */
export interface LedgerPageRow extends LedgerRow {
  readonly entry_id: string
  readonly keyset_at: string
}

/** Totals of the runs created on one UTC day. */
export interface DayRow {
  readonly date: string
  readonly runs: number
  readonly input_tokens: number
  readonly output_tokens: number
  readonly spend_micros: number
}

/** One run's usage figures. */
export interface RunUsageRow {
  readonly id: string
  readonly kind: "decision" | "verdict"
  readonly state: "pending" | "completed" | "failed"
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cost_micros: number
  readonly reserved_micros: number
  readonly created_at: Date
  readonly settled_at: Date | null
}

/** A run's call as the one-statement run query returns it (null columns when the run has no call). */
interface CallColumns {
  readonly call_retry_ordinal: number | null
  readonly call_provider: string | null
  readonly call_model_id: string | null
  readonly call_provider_request_id: string | null
  readonly call_status: "succeeded" | "failed" | null
  readonly call_input_tokens: number | null
  readonly call_output_tokens: number | null
  readonly call_cost_micros: number | null
  readonly call_created_at: Date | null
  readonly call_key_id: string | null
}

const callOf = (row: RunUsageRow & CallColumns): Option.Option<LedgerRow> =>
  row.call_status === null
    ? Option.none()
    : Option.some({
      run_id: row.id,
      retry_ordinal: row.call_retry_ordinal!,
      provider: row.call_provider!,
      model_id: row.call_model_id!,
      provider_request_id: row.call_provider_request_id,
      status: row.call_status,
      input_tokens: row.call_input_tokens!,
      output_tokens: row.call_output_tokens!,
      cost_micros: row.call_cost_micros!,
      created_at: row.call_created_at!,
      key_id: row.call_key_id
    })

const ledgerColumns = `run_id::text, retry_ordinal, provider, model_id, provider_request_id, status, input_tokens,
  output_tokens, cost_micros, created_at, key_id, id::text AS entry_id, ${keysetAtSql} AS keyset_at`

/** The usage statements over a SQL client (timestamps are bound as ISO strings, so any year 0001-9999 survives). */
export const usageStatements = (sql: SqlClient.SqlClient) => {
  const from = (window: Window) => window.start.toISOString()
  const to = (window: Window) => window.end.toISOString()
  return {
    rollup: (organizationId: string, window: Window) =>
      sql<RollupRow>`SELECT count(*) AS total,
          count(*) FILTER (WHERE state = 'completed') AS completed,
          count(*) FILTER (WHERE state = 'failed') AS failed,
          count(*) FILTER (WHERE state = 'pending') AS in_flight,
          COALESCE(sum(input_tokens), 0)::bigint AS input_tokens,
          COALESCE(sum(output_tokens), 0)::bigint AS output_tokens,
          COALESCE(sum(cost_micros) FILTER (WHERE state <> 'pending'), 0)::bigint AS settled_micros,
          COALESCE(sum(hold_micros) FILTER (WHERE held), 0)::bigint AS reserved_micros,
          (SELECT COALESCE(sum(l.cost_micros), 0)::bigint FROM runs p JOIN ledger_entries l ON l.run_id = p.id
            WHERE p.organization_id = ${organizationId} AND p.state = 'pending'
              AND p.created_at >= ${from(window)}::timestamptz AND p.created_at < ${to(window)}::timestamptz
          ) AS unsettled_micros
        FROM runs
        WHERE organization_id = ${organizationId}
          AND created_at >= ${from(window)}::timestamptz AND created_at < ${to(window)}::timestamptz`,
    ledger: (organizationId: string, window: Window, limit: number, query: LedgerQuery = WholeLedger) =>
      sql<LedgerPageRow>`SELECT ${sql.literal(ledgerColumns)} FROM ledger_entries
        WHERE organization_id = ${organizationId}
          ${query.keyId === null ? sql`` : sql`AND key_id = ${query.keyId}`}
          AND created_at >= ${from(window)}::timestamptz AND created_at < ${to(window)}::timestamptz
          ${
        query.start._tag === "After"
          ? sql`AND (created_at, id) < (${query.start.key.at}::timestamptz, ${query.start.key.id}::bigint)`
          : sql``
      }
        ORDER BY created_at DESC, id DESC
        LIMIT ${limit} OFFSET ${query.start._tag === "Offset" ? query.start.offset : 0}`,
    daily: (organizationId: string, window: Window) =>
      sql<DayRow>`SELECT to_char(d.day, 'YYYY-MM-DD') AS date, t.runs, t.input_tokens, t.output_tokens, t.spend_micros
        FROM unnest(${utcDays(window)}::date[]) WITH ORDINALITY AS d(day, n)
        CROSS JOIN LATERAL (
          SELECT count(*) AS runs, COALESCE(sum(input_tokens), 0)::bigint AS input_tokens,
            COALESCE(sum(output_tokens), 0)::bigint AS output_tokens, COALESCE(sum(cost_micros), 0)::bigint AS spend_micros
          FROM runs
          WHERE organization_id = ${organizationId}
            AND created_at >= greatest(d.day::timestamp AT TIME ZONE 'UTC', ${from(window)}::timestamptz)
            AND created_at < least((d.day + 1)::timestamp AT TIME ZONE 'UTC', ${to(window)}::timestamptz)
        ) AS t
        ORDER BY d.n`,
    run: (organizationId: string, id: string) =>
      sql<RunUsageRow & CallColumns>`SELECT r.id::text, r.kind, r.state, r.input_tokens, r.output_tokens, r.cost_micros,
          CASE WHEN r.held THEN r.hold_micros ELSE 0 END AS reserved_micros, r.created_at, r.settled_at,
          l.retry_ordinal AS call_retry_ordinal, l.provider AS call_provider, l.model_id AS call_model_id,
          l.provider_request_id AS call_provider_request_id, l.status AS call_status,
          l.input_tokens AS call_input_tokens, l.output_tokens AS call_output_tokens, l.cost_micros AS call_cost_micros,
          l.created_at AS call_created_at, l.key_id AS call_key_id
        FROM runs r LEFT JOIN ledger_entries l ON l.run_id = r.id
        WHERE r.organization_id = ${organizationId} AND r.id = ${id}::uuid
        ORDER BY l.created_at, l.id`
  }
}

/** One run's usage figures with its calls, oldest first. */
export interface RunUsage {
  readonly run: RunUsageRow
  readonly calls: ReadonlyArray<LedgerRow>
}

/** The repository's operations. */
export interface UsageRepoService {
  /** Totals of the runs created in the window. */
  readonly rollup: (organizationId: string, window: Window) => Effect.Effect<RollupRow, DatabaseUnavailable>
  /** Up to `limit` model calls recorded in the window, newest first, filtered and started as `query` says. */
  readonly ledger: (
    organizationId: string,
    window: Window,
    limit: number,
    query: LedgerQuery
  ) => Effect.Effect<ReadonlyArray<LedgerPageRow>, DatabaseUnavailable>
  /** The window's rollup per key or per model, largest settled spend first. */
  readonly groups: (
    organizationId: string,
    window: Window,
    by: GroupBy
  ) => Effect.Effect<ReadonlyArray<GroupRow>, DatabaseUnavailable>
  /** Totals per UTC day the window touches, oldest first, zeros for days without runs. */
  readonly daily: (organizationId: string, window: Window) => Effect.Effect<ReadonlyArray<DayRow>, DatabaseUnavailable>
  /** One run of the organization with its calls, oldest first (one snapshot); none when it has no such run. */
  readonly run: (organizationId: string, id: string) => Effect.Effect<Option.Option<RunUsage>, DatabaseUnavailable>
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const statements = usageStatements(sql)
  const grouped = groupStatements(sql)
  return UsageRepo.of({
    rollup: (organizationId, window) =>
      orUnavailable(Effect.map(statements.rollup(organizationId, window), (rows) => rows[0]!)),
    ledger: (organizationId, window, limit, query) =>
      orUnavailable(statements.ledger(organizationId, window, limit, query)),
    groups: (organizationId, window, by) => orUnavailable(grouped[by](organizationId, window)),
    daily: (organizationId, window) => orUnavailable(statements.daily(organizationId, window)),
    run: (organizationId, id) =>
      orUnavailable(Effect.map(statements.run(organizationId, id), (rows) =>
        Option.map(Option.fromNullishOr(rows[0]), (first) => ({
          run: {
            id: first.id,
            kind: first.kind,
            state: first.state,
            input_tokens: first.input_tokens,
            output_tokens: first.output_tokens,
            cost_micros: first.cost_micros,
            reserved_micros: first.reserved_micros,
            created_at: first.created_at,
            settled_at: first.settled_at
          } satisfies RunUsageRow,
          calls: rows.flatMap((row) => Option.toArray(callOf(row)))
        }))))
  })
})

/** Reads of usage figures. */
export class UsageRepo extends Context.Service<UsageRepo, UsageRepoService>()("UsageRepo") {
  /** The repository over the SQL client. */
  static readonly layer = Layer.effect(UsageRepo, make)
}
