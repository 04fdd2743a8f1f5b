/**
 * The money of runs (decisions.md, Precise rules; docs/ledger.md): `admit` holds a run's spend ceiling and token
 * reservation against the period quota (QuotaLedger) and, with billing on, against credit (CreditStore) before the
 * model is called; `settle` bills its calls, captures their cost and releases the rest, in the run's one synchronous
 * commit; `sweep` (Sweeper.ts) settles the runs of processes that died. Admission takes from this process's leased
 * slices in memory (Escrow) and stores the run with an asynchronous commit, PostgreSQL re-checking the slice; a run
 * no slice covers is admitted the exact way under the organization's lock. Slices are topped up in the background
 * from the organization's recent rate, returned when idle and on shutdown (Slices.ts), and come back on their own
 * (Holder.ts) when a process dies.
 */
import { Context, Effect, Exit, Layer } from "effect"
import { AppConfig } from "../config/AppConfig.js"
import { PgPools } from "../db/PgPool.js"
import { type Fork, forkOf } from "../fibers/Fork.js"
import { type AdmissionDone, admitNowWith } from "./AdmissionFlow.js"
import { LedgerBatches, makeBatcher } from "./Batcher.js"
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
  type SettlementResult,
  settlementIdentity
} from "./LedgerParts.js"
import type { RunEnd, SettlementInput } from "./Settlement.js"
import { makeSettlementQueue, type SettlementTicket } from "./SettlementQueue.js"
import { returnLeasesWhenIdle } from "./Slices.js"
import { addGaugeSampler, labels, ledgerSettlementsWaiting, record } from "../telemetry/Metrics.js"

export { AfterSettlement } from "./LedgerParts.js"
export type { AdmissionError, AdmissionOutcome, AdmissionRequest, AdmittedRun, SettlementResult } from "./LedgerParts.js"

/** A run's settlement under way. */
export interface Settling {
  /** Completes once the settlement has committed (retried while the database is unreachable). */
  readonly committed: Effect.Effect<SettlementResult>
  /**
   * `committed` outside the runtime: `callback` is called once the settlement has committed and what follows it (an
   * auto-recharge that came due, run in a fiber `fork` makes) has ended.
   */
  readonly onCommitted: (callback: (result: SettlementResult) => void, fork?: Fork) => void
  /** See `SettlementTicket.yieldTo`. */
  readonly yieldTo: SettlementTicket["yieldTo"]
}

/** The run ledger's operations. */
export interface RunLedgerService {
  /** Admits a run or explains why not (or replays the run its key already owns). */
  readonly admit: (request: AdmissionRequest) => Effect.Effect<AdmissionOutcome, AdmissionError>
  /**
   * `admit` outside the runtime (the run's flow, src/runs/RunExecution.ts): `done` is called once with the outcome;
   * the ways of admission that are Effects run in fibers `fork` makes (the caller's request id and loggers).
   */
  readonly admitNow: (request: AdmissionRequest, done: AdmissionDone, fork?: Fork) => void
  /** Starts settling an admitted run with its end; see `Settling`. */
  readonly settle: (run: AdmittedRun, end: RunEnd) => Settling
}

/** Settlement through the queue; the account after it, and auto-recharge when it is due. */
const settleWith = ({ after, escrow, fork: ledgerFork, queue }: LedgerParts): RunLedgerService["settle"] => (run, end) => {
  const ticket = queue.submit({ ...settlementIdentity(run.pending, run.holdCredit), recreate: true, end })
  const onCommitted: Settling["onCommitted"] = (callback, fork = ledgerFork) =>
    ticket.onCommitted((settled) => {
      for (const lease of settled.batch.leases) escrow.observe(lease)
      if (run.reservation !== undefined) escrow.release(run.reservation)
      const account = settled.batch.accounts.find((row) => row.organization_id === run.pending.organizationId)
      const result: SettlementResult = {
        balanceMicros: account?.balance_micros ?? null,
        rechargeDue: account?.recharge_due ?? false,
        settledAt: settled.batch.settledAt,
        end: settled.end,
        refused: settled.refused
      }
      if (!result.rechargeDue) return callback(result)
      fork(after(run.pending.organizationId, result)).addObserver(() => callback(result))
    })
  return {
    yieldTo: ticket.yieldTo,
    onCommitted,
    committed: Effect.withFiber((fiber) =>
      Effect.callback<SettlementResult>((resume) => onCommitted((result) => resume(Effect.succeed(result)), forkOf(fiber))))
  }
}

const make = Effect.gen(function*() {
  const pools = yield* PgPools
  const holder = yield* LedgerHolder
  // One organization's runs per batch where a distributed PostgreSQL routes each transaction by organization.
  const byOrganization = (yield* AppConfig).ledgerBatches === "organization"
  const admissionBatches = { ...LedgerBatches, groupOf: byOrganization ? (request: FastRequest) => request.run.organizationId : undefined }
  const settlementBatches = {
    ...LedgerBatches,
    groupOf: byOrganization ? (input: SettlementInput) => input.organizationId : undefined
  }
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
    pools,
    holder,
    after: yield* AfterSettlement,
    fork: Effect.runForkWith(services),
    escrow,
    limitedKeys: new RecentKeys(LimitedKeyMemoryMs),
    queue: makeSettlementQueue(pools.main, settlementBatches, services),
    fastBatcher,
    keyedBatcher
  }
  yield* returnLeasesWhenIdle(parts)
  const none = labels({})
  yield* addGaugeSampler(() => record(ledgerSettlementsWaiting, parts.queue.waiting(), none))
  const admitNow = admitNowWith(parts)
  return RunLedger.of({
    // The Effect form: admission's ways that are Effects run in fibers of the caller's (its request id, loggers).
    admit: (request) =>
      Effect.withFiber((fiber) => Effect.callback((resume) => admitNow(request, resume, forkOf(fiber)))),
    admitNow,
    settle: settleWith(parts)
  })
})

/** The run ledger. */
export class RunLedger extends Context.Service<RunLedger, RunLedgerService>()("RunLedger") {
  /** The ledger over the raw pools, this process's holder and what follows settlements. */
  static readonly layer = Layer.effect(RunLedger, make)
}
