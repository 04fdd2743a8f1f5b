/**
 * Runs and their model calls written straight into `runs` and `ledger_entries` (no HTTP), as settlement would leave
 * them: a settled run's tokens and cost are the sums of its calls, a pending run has none yet (its calls count as
 * unsettled), a held run holds its ceiling. For the usage tests that need exact shapes (several keys and models) or
 * volume (`seedRunVolume`, `seedLedgerVolume`: one `INSERT ... SELECT generate_series`).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"

/** One model call of a seeded run. */
export interface SeedCall {
  readonly model: string
  readonly input: number
  readonly output: number
  readonly cost: number
  readonly status?: "succeeded" | "failed"
}

/** One seeded run. */
export interface SeedRun {
  readonly key: string | null
  readonly state: "pending" | "completed" | "failed"
  readonly calls: ReadonlyArray<SeedCall>
  /** Held runs hold 20,000 micro-USD (pending runs only). */
  readonly held?: boolean
  readonly at: Date
}

/** The hold of a seeded held run. */
export const SeedHoldMicros = 20_000

const sum = (calls: ReadonlyArray<SeedCall>, pick: (call: SeedCall) => number) =>
  calls.reduce((total, call) => total + pick(call), 0)

/** Inserts one run and its calls (each call a millisecond after the run, in order); returns the run's uuid. */
export const insertRun = (organizationId: string, run: SeedRun) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const id = randomUUID()
    const settled = run.state !== "pending"
    const held = run.state === "pending" && run.held === true
    const at = run.at.toISOString()
    yield* sql`INSERT INTO runs (id, organization_id, origin, idempotency_key, kind, state, input_digest, input_tokens,
        output_tokens, cost_micros, period, hold_micros, hold_tokens, hold_credit, held, deadline_at, created_at,
        settled_at, key_id)
      VALUES (${id}::uuid, ${organizationId}, 'runs', ${`seed-${id}`}, 'decision', ${run.state}, ${"0".repeat(64)},
        ${settled ? sum(run.calls, (call) => call.input) : 0}, ${settled ? sum(run.calls, (call) => call.output) : 0},
        ${settled ? sum(run.calls, (call) => call.cost) : 0},
        date_trunc('month', ${at}::timestamptz AT TIME ZONE 'UTC')::date, ${SeedHoldMicros}, 1000, false, ${held},
        now() + interval '1 day', ${at}::timestamptz, ${settled ? at : null}::timestamptz, ${run.key})`
    for (const [index, call] of run.calls.entries()) {
      yield* sql`INSERT INTO ledger_entries (organization_id, run_id, call_index, retry_ordinal, provider, model_id,
          provider_request_id, status, input_tokens, output_tokens, cost_micros, created_at, billed, key_id)
        VALUES (${organizationId}, ${id}::uuid, ${index}, ${index}, 'openai', ${call.model}, ${`req-${id}-${index}`},
          ${call.status ?? "succeeded"}, ${call.input}, ${call.output}, ${call.cost},
          ${at}::timestamptz + ${index + 1} * interval '1 millisecond', ${settled}, ${run.key})`
    }
    return id
  })

/**
 * `count` completed runs of one organization, created before `newest`, newest first in groups of four sharing one
 * instant (so the order's tie on `created_at` is broken by id), instants 1,001 microseconds apart (so a position kept
 * to the millisecond would be wrong); no calls.
 */
export const seedRunVolume = (organizationId: string, count: number, newest: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO runs (id, organization_id, origin, idempotency_key, kind, state, input_digest, period, hold_micros,
        hold_tokens, hold_credit, held, deadline_at, created_at, settled_at)
      SELECT gen_random_uuid(), ${organizationId}, 'runs', 'volume-' || g, 'decision', 'completed', repeat('0', 64),
        date_trunc('month', now() AT TIME ZONE 'UTC')::date, 0, 0, false, false, now(),
        ${newest.toISOString()}::timestamptz - (g / 4) * interval '1001 microseconds',
        ${newest.toISOString()}::timestamptz
      FROM generate_series(1, ${count}::int) AS g`)

/**
 * `runs` settled runs of one organization with `callsPerRun` calls each, all recorded in `[from, from + 1 day)`,
 * alternating between two keys, with provider request ids of `idLength` characters holding a comma, a quote and a
 * line break (so the CSV must quote them) and sharing instants in pairs (so ties are broken by id). Written 2,500
 * runs per statement, so no statement runs long.
 */
export const seedLedgerVolume = (
  organizationId: string,
  options: { readonly runs: number; readonly callsPerRun: number; readonly from: Date; readonly keys: readonly [string, string]; readonly idLength: number }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const from = options.from.toISOString()
    for (let first = 1; first <= options.runs; first += 2_500) {
      const last = Math.min(options.runs, first + 2_499)
      yield* sql`WITH inserted AS (
          INSERT INTO runs (id, organization_id, origin, idempotency_key, kind, state, input_digest, period,
            hold_micros, hold_tokens, hold_credit, held, deadline_at, created_at, settled_at, key_id)
          SELECT gen_random_uuid(), ${organizationId}, 'runs', 'export-' || g, 'decision', 'completed', repeat('0', 64),
            date_trunc('month', ${from}::timestamptz AT TIME ZONE 'UTC')::date, 0, 0, false, false, now(),
            ${from}::timestamptz + interval '1 second', ${from}::timestamptz + interval '2 seconds',
            CASE WHEN g % 2 = 0 THEN ${options.keys[0]} ELSE ${options.keys[1]} END
          FROM generate_series(${first}::int, ${last}::int) AS g
          RETURNING id, organization_id, idempotency_key, key_id
        )
        INSERT INTO ledger_entries (organization_id, run_id, call_index, retry_ordinal, provider, model_id,
          provider_request_id, status, input_tokens, output_tokens, cost_micros, created_at, key_id)
        SELECT r.organization_id, r.id, c, c, 'openai', CASE WHEN c % 2 = 0 THEN 'judge-7b' ELSE 'judge,"13b"' END,
          CASE WHEN c = 0 THEN NULL
            ELSE left('req ' || r.idempotency_key || '-' || c || ', "quoted"' || chr(10) || repeat('x', ${options.idLength}),
              ${options.idLength}) END,
          CASE WHEN c = 0 THEN 'failed' ELSE 'succeeded' END, 10 * c, c, 3 * c,
          ${from}::timestamptz + interval '1 second'
            + ((substr(r.idempotency_key, 8)::int * ${options.callsPerRun}::int + c) / 2) * interval '7 microseconds',
          r.key_id
        FROM inserted r CROSS JOIN generate_series(0, ${options.callsPerRun - 1}::int) AS c`
    }
  })
