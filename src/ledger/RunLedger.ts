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
import { PgPools } from "../db/PgPool.js"
import { admitWith } from "./AdmissionFlow.js"
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
import type { RunEnd } from "./Settlement.js"
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

/** The run ledger's operations. */
export interface RunLedgerService {
  /** Admits a run or explains why not (or replays the run its key already owns). */
  readonly admit: (request: AdmissionRequest) => Effect.Effect<AdmissionOutcome, AdmissionError>
  /** Starts settling an admitted run with its end; see `Settling`. */
  readonly settle: (run: AdmittedRun, end: RunEnd) => Settling
}

/** Settlement through the queue; the account after it, and auto-recharge when it is due. */
const settleWith = ({ after, escrow, queue }: LedgerParts): RunLedgerService["settle"] => (run, end) => {
  const ticket = queue.submit({ ...settlementIdentity(run.pending, run.holdCredit), recreate: true, end })
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
      LedgerBatches
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
    queue: makeSettlementQueue(pools.main, LedgerBatches, services),
    fastBatcher,
    keyedBatcher
  }
  yield* returnLeasesWhenIdle(parts)
  const none = labels({})
  yield* addGaugeSampler(() => record(ledgerSettlementsWaiting, parts.queue.waiting(), none))
  return RunLedger.of({
    admit: admitWith(parts),
    settle: settleWith(parts)
  })
})

/** The run ledger. */
export class RunLedger extends Context.Service<RunLedger, RunLedgerService>()("RunLedger") {
  /** The ledger over the raw pools, this process's holder and what follows settlements. */
  static readonly layer = Layer.effect(RunLedger, make)
}
