/**
 * Ledger entries of runs still reading. A run's calls are stored by the transaction that settles it; a call a run
 * still reading learned of `EarlyRecordDelayMs` ago is stored now, unbilled, so the ledger, the run's usage and the
 * rollup's `unsettled_micros` show calls already answered (decisions.md, Precise rules), and a sweeper can bill them
 * should the run's process die. A later read of the run (its next stage, or a question past the stage's concurrency)
 * does not wait for the delay: its call starts once the calls answered before it are stored (`flush`), so while
 * a later call is open the answered ones are in the rollup. A run of one stage settles without an early write; one
 * of several stages pays one write per later stage. Entries are keyed by run and call index, so a call stored early
 * and again at settlement is stored once (and billed once, by settlement). A run settles only after its early writes
 * have ended. Early writes are batched across runs, with an asynchronous commit (visible to every reader at once;
 * settlement's synchronous commit makes them durable).
 */
import { Context, Effect, Exit, Fiber, Layer } from "effect"
import { PgPools } from "../db/PgPool.js"
import { ledgerBatchesOf, makeBatcher } from "./Batcher.js"
import { query, type Statement } from "../db/LedgerSql.js"
import { type LedgerCall, ledgerRows } from "./RunRecord.js"

/** How long an answered call of a run still in flight waits before it is stored on its own. */
export const EarlyRecordDelayMs = 200

const recordStatement: Statement = {
  name: "ledger_record_early",
  text: `INSERT INTO ledger_entries (organization_id, run_id, call_index, retry_ordinal, provider, model_id,
      provider_request_id, status, input_tokens, output_tokens, cost_micros, created_at, billed, key_id)
    SELECT c.organization_id, c.run_id, c.call_index, c.retry_ordinal, c.provider, c.model_id, c.provider_request_id,
      c.status, c.input_tokens, c.output_tokens, c.cost_micros, c.created_at, false,
      (SELECT r.key_id FROM runs r WHERE r.id = c.run_id)
    FROM json_to_recordset($1::json) AS c(organization_id text, run_id uuid, call_index integer,
      retry_ordinal integer, provider text, model_id text, provider_request_id text, status text,
      input_tokens bigint, output_tokens bigint, cost_micros bigint, created_at timestamptz)
    ORDER BY c.run_id, c.call_index
    ON CONFLICT (run_id, call_index) DO NOTHING`
}

const organizationOf = (group: { readonly organizationId: string }) => group.organizationId

/** One run's early recording: told of calls as they are answered; stopped before the run settles. */
export interface EarlyRecording {
  readonly add: (calls: ReadonlyArray<LedgerCall>) => void
  /** Drops what was not written yet (settlement writes it) and waits for writes under way. */
  readonly stop: Effect.Effect<void>
  /**
   * Stores the calls told of and not yet written, at once, and waits for every write under way (at once when nothing
   * is waiting or being written). A write that fails is left to settlement.
   */
  readonly flush: Effect.Effect<void>
}

export interface CallRecorderService {
  /** Early recording for one run. */
  readonly forRun: (organizationId: string) => EarlyRecording
}

const make = Effect.gen(function*() {
  const { asyncCommit } = yield* PgPools
  const fork = Effect.runForkWith(yield* Effect.context<never>())

  const recordBatch = (groups: ReadonlyArray<{ readonly organizationId: string; readonly calls: ReadonlyArray<LedgerCall> }>) =>
    Effect.as(
      query(asyncCommit, recordStatement, [JSON.stringify(groups.flatMap((group) =>
        ledgerRows(group.calls).map((row) => ({ ...row, organization_id: group.organizationId }))))]),
      groups.map(() => Exit.void)
    )

  const batcher = yield* makeBatcher(recordBatch, yield* ledgerBatchesOf(organizationOf))

  // A write that fails is left to settlement, which stores the calls too.
  const record = (organizationId: string, calls: ReadonlyArray<LedgerCall>) =>
    Effect.catch(batcher.submit({ organizationId, calls }), (error) =>
      Effect.logDebug("answered calls will be stored at settlement", error))

  return CallRecorder.of({ forRun: (organizationId) => earlyRecording((calls) => fork(record(organizationId, calls))) })
})

/** One run's early recording, each write of its waiting calls started by `write`. */
const earlyRecording = (write: (calls: ReadonlyArray<LedgerCall>) => Fiber.Fiber<void>): EarlyRecording => {
  let waiting: Array<LedgerCall> = []
  let timer: ReturnType<typeof setTimeout> | undefined
  const writing = new Set<Fiber.Fiber<void>>()
  const flush = () => {
    timer = undefined
    const calls = waiting
    waiting = []
    const fiber = write(calls)
    writing.add(fiber)
    fiber.addObserver(() => writing.delete(fiber))
  }
  const afterWrites = Effect.suspend(() => writing.size === 0 ? Effect.void : Effect.asVoid(Fiber.awaitAll([...writing])))
  return {
    add: (calls) => {
      waiting.push(...calls)
      if (timer === undefined) timer = setTimeout(flush, EarlyRecordDelayMs)
    },
    stop: Effect.suspend(() => {
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
      waiting = []
      return afterWrites
    }),
    flush: Effect.suspend(() => {
      if (waiting.length > 0) {
        if (timer !== undefined) clearTimeout(timer)
        flush()
      }
      return afterWrites
    })
  }
}

/** Early ledger entries of runs in flight. */
export class CallRecorder extends Context.Service<CallRecorder, CallRecorderService>()("CallRecorder") {
  /** The recorder over the asynchronous-commit pool. */
  static readonly layer = Layer.effect(CallRecorder, make)
}
