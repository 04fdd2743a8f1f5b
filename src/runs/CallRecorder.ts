/**
 * Ledger entries of runs still in flight. A run's calls are stored by the transaction that settles it; a run that
 * is still reading when a call was answered `EarlyRecordDelayMs` ago has that call stored now, so the ledger, the
 * run's usage and the rollup's `unsettled_micros` show calls already answered (decisions.md, Precise rules). Most
 * runs settle within that delay and cost no extra write. Entries are keyed by run and call index, so a call stored
 * early and again at settlement is stored once; a run settles only after its early writes have ended (their rows
 * would otherwise wait on the run's lock while settlement waits on theirs). Early writes are batched across runs.
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Exit, Fiber, Layer, Runtime } from "effect"
import { orUnavailable } from "../db/Unavailable.js"
import { makeBatcher } from "./Batcher.js"
import type { LedgerCall } from "./RunsRepo.js"

/** How long an answered call of a run still in flight waits before it is stored on its own. */
export const EarlyRecordDelayMs = 200

/** The ledger entries of a batch of calls as `json_to_recordset` rows (shared with settlement). */
export const ledgerRows = (calls: ReadonlyArray<LedgerCall>) =>
  calls.map((call) => ({
    run_id: call.runId,
    call_index: call.callIndex,
    retry_ordinal: call.retryOrdinal,
    provider: call.provider,
    model_id: call.modelId,
    provider_request_id: call.providerRequestId,
    status: call.status,
    input_tokens: call.inputTokens,
    output_tokens: call.outputTokens,
    cost_micros: call.costMicros,
    created_at: call.createdAt.toISOString()
  }))

/** One run's early recording: told of calls as they are answered; stopped before the run settles. */
export interface EarlyRecording {
  readonly add: (calls: ReadonlyArray<LedgerCall>) => void
  /** Drops what was not written yet (settlement writes it) and waits for writes under way. */
  readonly stop: Effect.Effect<void>
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const runtime = yield* Effect.runtime<never>()

  const recordBatch = (groups: ReadonlyArray<{ readonly organizationId: string; readonly calls: ReadonlyArray<LedgerCall> }>) =>
    Effect.as(
      orUnavailable(sql`INSERT INTO ledger_entries (organization_id, run_id, call_index, retry_ordinal, provider,
          model_id, provider_request_id, status, input_tokens, output_tokens, cost_micros, created_at)
        SELECT c.organization_id, c.run_id, c.call_index, c.retry_ordinal, c.provider, c.model_id,
          c.provider_request_id, c.status, c.input_tokens, c.output_tokens, c.cost_micros, c.created_at
        FROM json_to_recordset(${JSON.stringify(groups.flatMap((group) =>
          ledgerRows(group.calls).map((row) => ({ ...row, organization_id: group.organizationId }))))}::json)
          AS c(organization_id text, run_id uuid, call_index integer, retry_ordinal integer, provider text,
            model_id text, provider_request_id text, status text, input_tokens bigint, output_tokens bigint,
            cost_micros bigint, created_at timestamptz)
        ORDER BY c.run_id, c.call_index
        ON CONFLICT (run_id, call_index) DO NOTHING`),
      groups.map(() => Exit.void)
    )

  const batcher = yield* makeBatcher(recordBatch, { maxBatch: 128, maxInFlight: 1 })

  /** Stores calls of a run still in flight now (a failure is left to settlement, which stores them too). */
  const record = (organizationId: string, calls: ReadonlyArray<LedgerCall>) =>
    batcher.submit({ organizationId, calls }).pipe(
      Effect.catchAll((error) => Effect.logDebug("answered calls will be stored at settlement", error))
    )

  return {
    record,
    /** Early recording for one run. */
    forRun: (organizationId: string): EarlyRecording => {
      let waiting: Array<LedgerCall> = []
      let timer: ReturnType<typeof setTimeout> | undefined
      const writing = new Set<Fiber.RuntimeFiber<void>>()
      const flush = () => {
        timer = undefined
        const calls = waiting
        waiting = []
        const fiber = Runtime.runFork(runtime)(record(organizationId, calls))
        writing.add(fiber)
        fiber.addObserver(() => writing.delete(fiber))
      }
      return {
        add: (calls) => {
          waiting.push(...calls)
          if (timer === undefined) timer = setTimeout(flush, EarlyRecordDelayMs)
        },
        stop: Effect.suspend(() => {
          if (timer !== undefined) clearTimeout(timer)
          timer = undefined
          waiting = []
          return writing.size === 0 ? Effect.void : Fiber.awaitAll([...writing]).pipe(Effect.asVoid)
        })
      }
    }
  }
})

/** Early ledger entries of runs in flight. */
export class CallRecorder extends Context.Tag("CallRecorder")<CallRecorder, Effect.Effect.Success<typeof make>>() {
  /** The recorder over the SQL client. */
  static readonly layer = Layer.effect(CallRecorder, make)
}
