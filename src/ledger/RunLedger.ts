/**
 * The money of runs (decisions.md, Precise rules; docs/ledger.md), built on the quota ledger and the credit store:
 * `admit` holds a run's spend ceiling and token reservation against the period quota (`QuotaLedger.reserve`) and, with
 * billing on, against credit (`CreditStore.hold`) before the model is called; `settle` bills its calls, captures their cost and releases the rest, in the run's one synchronous
 * commit (one statement carrying `QuotaLedger.settleSql` and `CreditStore.captureSql`); `sweep` (Sweeper.ts) settles the runs of processes that died. Admission takes from this process's leased
 * slices in memory (Escrow) and stores the run with an asynchronous commit, PostgreSQL re-checking the slice; a run
 * no slice covers is admitted the exact way under the organization's lock. Slices are topped up in the background
 * from the organization's recent rate, returned when idle and on shutdown (Slices.ts), and come back on their own
 * (Holder.ts) when a process dies.
 */
import { Context, Effect, Exit, Layer, Option } from "effect"
import { AppConfig } from "../config/AppConfig.js"
import { PgPools } from "../db/PgPool.js"
import { Lifecycle } from "../health/Lifecycle.js"
import { admitWith } from "./AdmissionFlow.js"
import { ledgerBatchesOf, makeBatcher } from "./Batcher.js"
import { CreditStore } from "./CreditStore.js"
import { Escrow } from "./Escrow.js"
import { type FastRequest, storeFast } from "./FastAdmission.js"
import { LedgerHolder } from "./Holder.js"
import { LimitedKeyMemoryMs, RecentKeys } from "./KeyAccounts.js"
import {
  type AdmissionError,
  type AdmissionOutcome,
  type AdmissionRequest,
  type AdmittedRun,
  AfterSettlement,
  type LedgerParts,
  type SettlementResult
} from "./LedgerParts.js"
import { QuotaLedger } from "./QuotaLedger.js"
import { type RunEnd, type SettlementInput, settlementWith } from "./Settlement.js"
import { makeSettlementQueue, type Settled, type SettlementTicket } from "./SettlementQueue.js"
import { returnLeasesWhenIdle } from "./Slices.js"
import { addGaugeSampler, labels, ledgerSettlementsWaiting, record } from "../telemetry/Metrics.js"

export { AfterSettlement } from "./LedgerParts.js"
export type { AdmissionError, AdmissionOutcome, AdmissionRequest, AdmittedRun, SettlementResult } from "./LedgerParts.js"

/** A run's settlement under way. */
export interface Settling {
  /**
   * Completes once the settlement has committed (retried while the database is unreachable) and what follows it (an
   * auto-recharge that came due) has ended.
   */
  readonly committed: Effect.Effect<SettlementResult>
  /** See `SettlementTicket.yieldTo`. */
  readonly yieldTo: SettlementTicket["yieldTo"]
}

export interface RunLedgerService {
  /** Admits a run or explains why not (or replays the run its key already owns). */
  readonly admit: (request: AdmissionRequest) => Effect.Effect<AdmissionOutcome, AdmissionError>
  /** Starts settling an admitted run with its end; see `Settling`. */
  readonly settle: (run: AdmittedRun, end: RunEnd) => Settling
}

/** Settlement through the queue; the account after it, and auto-recharge when it is due. */
const settleWith = ({ after, escrow, queue }: LedgerParts): RunLedgerService["settle"] => (run, end) => {
  // The pending run is who the run is for settlement (to find it, or to store it again).
  const ticket = queue.submit({ ...run.pending, holdCredit: run.holdCredit, recreate: true, end })
  const resultOf = (settled: Settled): SettlementResult => {
    for (const lease of settled.batch.leases) escrow.observe(lease)
    if (run.reservation !== undefined) escrow.release(run.reservation)
    const account = settled.batch.accounts.find((row) => row.organization_id === run.pending.organizationId)
    return {
      balanceMicros: account?.balance_micros ?? null,
      rechargeDue: account?.recharge_due ?? false,
      settledAt: settled.batch.settledAt,
      end: settled.end,
      refused: settled.refused
    }
  }
  // The escrow is told once, however many wait for the settlement.
  let result: SettlementResult | undefined
  return {
    yieldTo: ticket.yieldTo,
    committed: Effect.flatMap(ticket.committed, (settled) => {
      if (result !== undefined) return Effect.succeed(result)
      const settledResult = result = resultOf(settled)
      // What follows (an auto-recharge) ends before the answer, however it ends: the run's outcome is settled.
      return settledResult.rechargeDue
        ? Effect.as(Effect.exit(after(run.pending.organizationId, settledResult)), settledResult)
        : Effect.succeed(settledResult)
    })
  }
}

const make = Effect.gen(function*() {
  const pools = yield* PgPools
  const holder = yield* LedgerHolder
  const quota = yield* QuotaLedger
  const credit = yield* CreditStore
  const admissionBatches = yield* ledgerBatchesOf((request: FastRequest) => request.run.organizationId)
  const settlementBatches = yield* ledgerBatchesOf((input: SettlementInput) => input.organizationId)
  const services = yield* Effect.context<never>()
  const escrow = new Escrow()
  holder.onReregistered(() => escrow.retireAll())
  // Batches of the fast way; `keyed`: of runs of keys with limits, under their keys' locks.
  const batcherOf = (keyed: boolean) =>
    makeBatcher(
      (batch: ReadonlyArray<FastRequest>) =>
        Effect.map(
          storeFast(pools.asyncCommit, holder.id(), batch, keyed ? batch.map(({ run }) => run.keyId!) : []),
          ({ leases, outcomes }) => {
            for (const lease of leases) escrow.observe(lease)
            return outcomes.map((outcome) => Exit.succeed(outcome))
          }
        ),
      admissionBatches
    )
  const fastBatcher = yield* batcherOf(false)
  const keyedBatcher = yield* batcherOf(true)
  const parts: LedgerParts = {
    quota,
    credit,
    pools,
    holder,
    after: yield* AfterSettlement,
    fork: Effect.runForkWith(services),
    escrow,
    limitedKeys: new RecentKeys(LimitedKeyMemoryMs),
    queue: makeSettlementQueue(pools.main, settlementBatches, services, settlementWith(quota, credit)),
    fastBatcher,
    keyedBatcher
  }
  yield* returnLeasesWhenIdle(parts)
  yield* Effect.addFinalizer(() => settleBeforeStopping(parts.queue))
  const none = labels({})
  yield* addGaugeSampler(() => record(ledgerSettlementsWaiting, parts.queue.waiting(), none))
  return RunLedger.of({ admit: admitWith(parts), settle: settleWith(parts) })
})

/** At least this long for the settlements still queued at stop, even when the in-flight runs took all the time. */
const MinSettleAtStopMs = 1_000

/**
 * At stop, after the listener has closed (its finalizer runs first): waits for the settlements still queued until
 * the stop's deadline (Lifecycle.ts; `SHUTDOWN_TIMEOUT_MS` when the process has no listener), so that no held credit
 * is left behind. Settlements the database does not take by then are left to the sweepers of the other processes,
 * which settle this holder's runs once its heartbeat stops (Holder.ts).
 */
const settleBeforeStopping = (queue: LedgerParts["queue"]) =>
  Effect.gen(function*() {
    const lifecycle = yield* Lifecycle
    const waiting = queue.waiting()
    if (waiting === 0) {
      if (lifecycle.stopping()) yield* Effect.logInfo("shutdown: settled; no settlement was waiting")
      return
    }
    const deadline = lifecycle.deadline() ?? Date.now() + (yield* AppConfig).shutdownTimeoutMs
    const allowMs = Math.max(MinSettleAtStopMs, deadline - Date.now())
    yield* Effect.logInfo(`shutdown: settling ${waiting} runs within ${allowMs} ms`)
    const settled = yield* queue.idle.pipe(Effect.timeoutOption(allowMs))
    yield* Option.isSome(settled)
      ? Effect.logInfo(`shutdown: settled; ${waiting} runs settled`)
      : Effect.logWarning(
        `shutdown: ${queue.waiting()} runs not settled within ${allowMs} ms; the other processes' sweepers settle them`
      )
  })

export class RunLedger extends Context.Service<RunLedger, RunLedgerService>()("RunLedger") {
  /**
   * The ledger over the quota ledger and the credit store (whose rules and statement parts it applies), the raw
   * pools, this process's holder and what follows settlements.
   */
  static readonly layer = Layer.effect(RunLedger, make)
}
