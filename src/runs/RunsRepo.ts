/**
 * The `runs` and `ledger_entries` tables. Admission and settlement write them through the database functions
 * `arbiter_admit` and `arbiter_settle` (migrations/0007, see Admission.ts and Settlement.ts); this module reads them.
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import { orUnavailable } from "../db/Unavailable.js"

/** Where a run came from: `POST /v1/runs`, or a router selection's classification. */
export type RunOrigin = "runs" | "router"

/** A stored run. */
export interface RunRow {
  readonly id: string
  readonly organization_id: string
  readonly origin: RunOrigin
  readonly idempotency_key: string
  readonly kind: "decision" | "verdict"
  readonly state: "pending" | "completed" | "failed"
  readonly input_digest: string
  readonly output_digest: string | null
  readonly output: unknown
  readonly error_code: string | null
  readonly error_message: string | null
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cost_micros: number
  readonly hold_micros: number
  readonly hold_tokens: number
  readonly created_at: Date
  readonly settled_at: Date | null
}

/** A run's final state. */
export interface RunSettlement {
  readonly id: string
  readonly state: "pending" | "completed" | "failed"
  readonly output: unknown
  readonly outputDigest: string | null
  readonly errorCode: string | null
  readonly errorMessage: string | null
}

/** One model call as the ledger records it. */
export interface LedgerCall {
  readonly runId: string
  /** The call's place among its run's calls (0, 1, ...); a call is stored once per run and index. */
  readonly callIndex: number
  readonly retryOrdinal: number
  readonly provider: string
  readonly modelId: string
  readonly providerRequestId: string | null
  readonly status: "succeeded" | "failed"
  readonly inputTokens: number
  readonly outputTokens: number
  readonly costMicros: number
  readonly createdAt: Date
}

const columns = `id::text, organization_id, origin, idempotency_key, kind, state, input_digest, output_digest, output,
  error_code, error_message, input_tokens, output_tokens, cost_micros, hold_micros, hold_tokens, created_at, settled_at`

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const cols = sql.literal(columns)
  return {
    /** One run of an organization. */
    get: (organizationId: string, id: string) =>
      orUnavailable(
        Effect.map(
          sql<RunRow>`SELECT ${cols} FROM runs WHERE organization_id = ${organizationId} AND id = ${id}::uuid`,
          (rows) => Option.fromNullable(rows[0])
        )
      ),
    /** A page of an organization's runs, newest first. */
    list: (organizationId: string, limit: number, offset: number) =>
      orUnavailable(
        sql<Pick<RunRow, "id" | "kind" | "state" | "input_digest" | "output_digest">>`
          SELECT id::text, kind, state, input_digest, output_digest FROM runs
          WHERE organization_id = ${organizationId}
          ORDER BY runs.created_at DESC, runs.id DESC LIMIT ${limit} OFFSET ${offset}`
      ),
    /**
     * Runs whose holds outlived their deadline by `marginSeconds` (their process died), oldest first, and whether
     * a model call of theirs was answered (recorded while they ran).
     */
    abandoned: (marginSeconds: number, limit: number) =>
      orUnavailable(
        sql<{ id: string; organization_id: string; answered: boolean }>`SELECT id::text, organization_id,
            EXISTS (SELECT 1 FROM ledger_entries l WHERE l.run_id = runs.id AND l.status = 'succeeded') AS answered
          FROM runs
          WHERE held AND deadline_at < now() - make_interval(secs => ${marginSeconds})
          ORDER BY deadline_at LIMIT ${limit}`
      )
  }
})

/** Storage of runs and their ledger entries. */
export class RunsRepo extends Context.Tag("RunsRepo")<RunsRepo, Effect.Effect.Success<typeof make>>() {
  /** The repository over the SQL client. */
  static readonly layer = Layer.effect(RunsRepo, make)
}
