/**
 * Settlement: the second short transaction of a run, one statement (`arbiter_settle`, migrations/0007), batched
 * across organizations like admission. Under the account locks it writes each run's final state (`completed`,
 * `failed`, or still `pending` when no model call occurred), its ledger rows (one per model call, retries included;
 * those already stored while it ran are kept), its tokens and cost as the sum of its ledger rows, captures the cost
 * from the balance (when it held credit, into the UTC day's usage transaction), releases what remains of its holds,
 * and moves the period counters. Only runs still `pending` are settled, so retrying a settlement whose commit was
 * lost never charges twice. Returns the account afterwards and whether an auto-recharge is due.
 */
import { SqlClient } from "@effect/sql"
import { Context, Duration, Effect, Exit, Layer, Schedule } from "effect"
import type { DatabaseUnavailable } from "../../schema/Errors.js"
import { orUnavailable } from "../db/Unavailable.js"
import { makeBatcher } from "./Batcher.js"
import { ledgerRows } from "./CallRecorder.js"
import type { LedgerCall, RunSettlement } from "./RunsRepo.js"

/** A run's end, to be recorded. */
export interface SettlementRequest extends RunSettlement {
  readonly organizationId: string
  readonly calls: ReadonlyArray<LedgerCall>
}

/** The account after a settlement. */
export interface SettlementResult {
  readonly billingEnabled: boolean
  readonly balanceMicros: number
  /** The balance is under the organization's auto-recharge threshold and a recharge may run. */
  readonly rechargeDue: boolean
  /** The time recorded as the run's `settled_at` (when it left `pending`). */
  readonly settledAt: Date
}

interface AccountAfter {
  readonly billing_enabled: boolean
  readonly balance_micros: number
  readonly recharge_due: boolean
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const settleBatch = (requests: ReadonlyArray<SettlementRequest>) =>
    Effect.gen(function*() {
      const runs = JSON.stringify(requests.map((request) => ({
        id: request.id,
        org: request.organizationId,
        state: request.state,
        output: request.output,
        output_digest: request.outputDigest,
        error_code: request.errorCode,
        error_message: request.errorMessage
      })))
      const calls = JSON.stringify(requests.flatMap((request) => ledgerRows(request.calls)))
      const now = new Date()
      const [row] = yield* orUnavailable(
        sql<{ accounts: Record<string, AccountAfter> }>`SELECT arbiter_settle(${now}, ${runs}::json,
          ${calls}::json) AS accounts`
      )
      const accounts = row?.accounts ?? {}
      return requests.map((request) => {
        const account = accounts[request.organizationId]
        return Exit.succeed<SettlementResult>({
          billingEnabled: account?.billing_enabled ?? false,
          balanceMicros: account?.balance_micros ?? 0,
          rechargeDue: account?.recharge_due ?? false,
          settledAt: now
        })
      })
    })

  const batcher = yield* makeBatcher(settleBatch, { maxBatch: 128, maxInFlight: 2 })

  return {
    /**
     * Records a run's end. A database failure is retried for a while (the calls already happened and must be
     * recorded); the run stays `pending` with its holds if it never succeeds, until the sweeper releases them.
     */
    settle: (request: SettlementRequest): Effect.Effect<SettlementResult, DatabaseUnavailable> =>
      batcher.submit(request).pipe(
        Effect.retry(Schedule.exponential(Duration.millis(100), 2).pipe(Schedule.upTo(Duration.seconds(10)))),
        Effect.tapError(() => Effect.logError(`run ${request.id} could not be settled`))
      )
  }
})

/** Settlement of runs. */
export class Settlement extends Context.Tag("Settlement")<Settlement, Effect.Effect.Success<typeof make>>() {
  /** Settlement over the SQL client. */
  static readonly layer = Layer.effect(Settlement, make)
}
