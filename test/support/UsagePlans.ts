/**
 * Volume for the usage queries' plans: organizations whose runs (with one ledger entry per settled run) spread over a
 * year, written straight into the tables with `generate_series` (no HTTP), then vacuumed and analyzed as a live
 * database would be. `explainUsage` explains the exact statements the usage routes run (UsageRepo's
 * `usageStatements`, plus the quota read) and `scansOf` lists the table scans of a plan, for assertions and printing.
 */
import { Effect } from "effect"
import { SqlClient, Statement } from "effect/sql"
import { periodOf, QuotaLedger } from "../../src/ledger/QuotaLedger.js"
import { usageStatements } from "../../src/usage/UsageRepo.js"
import type { Window } from "../../src/usage/Window.js"

/** How much to seed. */
export interface UsageVolume {
  readonly organizations: number
  readonly runsPerOrganization: number
  /** Rows per INSERT, so no single statement runs long. */
  readonly chunk: number
}

/** The id of the n-th seeded organization. */
export const volumeOrganization = (n: number) => `org_plan_${n}`

/** Seeds the volume; runs are created over the year before `now`, every 1,000th still pending and held. */
export const seedUsageVolume = (volume: UsageVolume, now: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO organizations (id, name)
      SELECT 'org_plan_' || g, 'Plan org ' || g FROM generate_series(0, ${volume.organizations - 1}::int) g`
    yield* sql`INSERT INTO quota_limits (organization_id, period_spend_limit_micros, period_token_limit)
      SELECT 'org_plan_' || g, 100000000, NULL FROM generate_series(0, ${volume.organizations - 1}::int) g`
    const total = volume.organizations * volume.runsPerOrganization
    for (let first = 0; first < total; first += volume.chunk) {
      const last = Math.min(total, first + volume.chunk) - 1
      yield* sql`WITH seeded AS (
          SELECT g, 'org_plan_' || (g % ${volume.organizations}::int) AS organization_id,
            ${now.toISOString()}::timestamptz - (g::float8 / ${total}::int) * interval '365 days' AS at
          FROM generate_series(${first}::int, ${last}::int) g
        ), inserted AS (
          INSERT INTO runs (id, organization_id, origin, idempotency_key, kind, state, input_digest, input_tokens,
            output_tokens, cost_micros, period, hold_micros, hold_tokens, hold_credit, held, deadline_at, created_at,
            settled_at)
          SELECT gen_random_uuid(), organization_id, 'runs', 'plan-' || g, 'decision',
            CASE WHEN g % 1000 = 0 THEN 'pending' WHEN g % 17 = 0 THEN 'failed' ELSE 'completed' END,
            repeat('0', 64), CASE WHEN g % 1000 = 0 THEN 0 ELSE 1000 END, CASE WHEN g % 1000 = 0 THEN 0 ELSE 1 END,
            CASE WHEN g % 1000 = 0 THEN 0 ELSE 43 END, date_trunc('month', at AT TIME ZONE 'UTC')::date, 20000, 1200,
            false, g % 1000 = 0, at + interval '30 seconds', at,
            CASE WHEN g % 1000 = 0 THEN NULL ELSE at + interval '1 second' END
          FROM seeded
          RETURNING id, organization_id, state, input_tokens, output_tokens, cost_micros, created_at
        )
        INSERT INTO ledger_entries (organization_id, run_id, call_index, retry_ordinal, provider, model_id,
          provider_request_id, status, input_tokens, output_tokens, cost_micros, created_at)
        SELECT organization_id, id, 0, 0, 'openai', 'decision-1', 'chatcmpl-' || id, 'succeeded', input_tokens,
          output_tokens, cost_micros, created_at + interval '1 second'
        FROM inserted WHERE state <> 'pending'`
    }
    yield* sql`VACUUM ANALYZE runs`
    yield* sql`VACUUM ANALYZE ledger_entries`
    yield* sql`VACUUM ANALYZE quota_limits`
  })

/** A node of a JSON plan. */
export interface PlanNode {
  readonly "Node Type": string
  readonly "Relation Name"?: string
  readonly "Index Name"?: string
  readonly Plans?: ReadonlyArray<PlanNode>
}

/** One explained usage statement: its name, the JSON plan and the text plan. */
export interface ExplainedQuery {
  readonly name: string
  readonly plan: PlanNode
  readonly text: string
}

/** Every scan of a plan, as `Node Type on relation using index`. */
export const scansOf = (plan: PlanNode): ReadonlyArray<{ readonly node: string; readonly relation: string; readonly index: string | null }> => [
  ...(plan["Relation Name"] === undefined ? [] : [{ node: plan["Node Type"], relation: plan["Relation Name"], index: plan["Index Name"] ?? null }]),
  ...(plan.Plans ?? []).flatMap(scansOf)
]

/** Runs an effect and returns the SQL and parameters of the (single) statement it executed. */
const capturedStatement = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    let captured: readonly [string, ReadonlyArray<unknown>] | undefined
    const capture: Statement.Transformer = (statement) => {
      captured = statement.compile()
      return Effect.succeed(statement)
    }
    return Effect.provideService(effect, Statement.CurrentTransformer, capture).pipe(
      Effect.flatMap(() => captured === undefined ? Effect.die(new Error("no statement ran")) : Effect.succeed(captured))
    )
  })

/** Explains each usage statement for one organization, window and run (`analyze` also runs them, for timings). */
export const explainUsage = (organizationId: string, window: Window, runId: string, options: { readonly analyze: boolean }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const statements = usageStatements(sql)
    const quota = yield* Effect.provide(QuotaLedger, QuotaLedger.layer)
    const quotaRead = yield* capturedStatement(quota.read(organizationId, periodOf(window.start)))
    const queries: ReadonlyArray<readonly [string, readonly [string, ReadonlyArray<unknown>]]> = [
      ["rollup", statements.rollup(organizationId, window).compile()],
      ["ledger (limit 50)", statements.ledger(organizationId, window, 50).compile()],
      ["daily", statements.daily(organizationId, window).compile()],
      ["run with its calls", statements.run(organizationId, runId).compile()],
      ["quota (QuotaLedger.read)", quotaRead]
    ]
    const explained: Array<ExplainedQuery> = []
    for (const [name, [text, params]] of queries) {
      const analyze = options.analyze ? "ANALYZE, BUFFERS, " : ""
      const [json] = yield* sql.unsafe<{ "QUERY PLAN": ReadonlyArray<{ Plan: PlanNode }> }>(`EXPLAIN (${analyze}FORMAT JSON) ${text}`, params)
      const lines = yield* sql.unsafe<{ "QUERY PLAN": string }>(`EXPLAIN (${analyze}FORMAT TEXT) ${text}`, params)
      explained.push({ name, plan: json!["QUERY PLAN"][0]!.Plan, text: lines.map((line) => line["QUERY PLAN"]).join("\n") })
    }
    return explained
  })
