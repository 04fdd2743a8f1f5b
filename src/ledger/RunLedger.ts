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
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Deferred, Effect, Exit, Layer, Runtime } from "effect"
import { type DatabaseUnavailable, DeadlineExceeded } from "../../schema/Errors.js"
import { PgPools } from "../db/PgPool.js"
import { isTransactionConflict, unavailableOrDie } from "../db/Unavailable.js"
import { uuidFromHex, uuidv7Hex } from "../ids/Ids.js"
import { admitExact, type PendingRun } from "./Admission.js"
import { type FastOutcome, type FastRequest, storeFast, undoRaced } from "./FastAdmission.js"
import { type Batcher, LedgerBatches, makeBatcher } from "./Batcher.js"
import { Escrow, type Needs, type Reservation } from "./Escrow.js"
import { LedgerHolder } from "./Holder.js"
import { LimitedKeyMemoryMs, RecentKeys } from "./KeyAccounts.js"
import { periodOf } from "./QuotaLedger.js"
import { type Refusal, refusal } from "./Refusals.js"
import type { RunOrigin, RunRow } from "./RunRecord.js"
import type { RunEnd } from "./Settlement.js"
import { makeSettlementQueue, type SettlementTicket } from "./SettlementQueue.js"
import { returnLeasesWhenIdle, topUpWith } from "./Slices.js"

/** A run asking to be admitted. */
export interface AdmissionRequest {
  readonly organizationId: string
  readonly origin: RunOrigin
  readonly idempotencyKey: string
  readonly kind: "decision" | "verdict"
  readonly inputDigest: string
  /** The spend ceiling it holds (spec, Limits). */
  readonly holdMicros: number
  readonly holdTokens: number
  /** When the run's deadline passes (epoch milliseconds). */
  readonly deadline: number
  /** The API key asking (null for a console session): its own limits are checked after the organization's quota. */
  readonly keyId: string | null
}

/** An admitted run, stored `pending` with its holds: what settling it needs. */
export interface AdmittedRun {
  readonly pending: PendingRun
  readonly holdCredit: boolean
  readonly reservation: Reservation | undefined
}

/** What admission decided. */
export type AdmissionOutcome =
  | { readonly _tag: "Admitted"; readonly run: AdmittedRun }
  | { readonly _tag: "Replayed"; readonly run: RunRow }

/** Why admission refused a run: the contract's refusals (Refusals.ts), its deadline, or the database away. */
export type AdmissionError = Refusal | DeadlineExceeded | DatabaseUnavailable

/** The account after a settlement, for what follows it (auto-recharge). */
export interface SettlementResult {
  readonly balanceMicros: number | null
  /** The balance is under the organization's auto-recharge threshold and a recharge may run. */
  readonly rechargeDue: boolean
  /** The time recorded as the run's `settled_at` (when it left `pending`). */
  readonly settledAt: Date
  /** The end stored: the caller's, or the failure it yielded to at its deadline. */
  readonly end: RunEnd
  /** PostgreSQL refused the caller's end: the run was stored failed, without its output, its calls billed. */
  readonly refused: boolean
}

/** A run's settlement under way. */
export interface Settling {
  /** Completes once the settlement has committed (retried while the database is unreachable). */
  readonly committed: Effect.Effect<SettlementResult>
  /** See `SettlementTicket.yieldTo`. */
  readonly yieldTo: SettlementTicket["yieldTo"]
}

/** What runs after each settlement that moved money (auto-recharge); a declared dependency of the ledger. */
export class AfterSettlement extends Context.Tag("AfterSettlement")<
  AfterSettlement,
  (organizationId: string, result: SettlementResult) => Effect.Effect<void>
>() {
  /** Nothing after settlements (the operator CLI, tests of the ledger alone). */
  static readonly none = Layer.succeed(AfterSettlement, () => Effect.void)
}

/** Who a run is, as settlement needs it (to find it, or to store it again). */
const settlementIdentity = (run: PendingRun, holdCredit: boolean) => ({
  id: run.id,
  organizationId: run.organizationId,
  origin: run.origin,
  idempotencyKey: run.idempotencyKey,
  kind: run.kind,
  inputDigest: run.inputDigest,
  period: run.period,
  holdCredit,
  createdAt: run.createdAt,
  deadlineAt: run.deadlineAt,
  holder: run.holder,
  keyId: run.keyId
})

/** The run ledger's operations. */
export interface RunLedgerService {
  /** Admits a run or explains why not (or replays the run its key already owns). */
  readonly admit: (request: AdmissionRequest) => Effect.Effect<AdmissionOutcome, AdmissionError>
  /** Starts settling an admitted run with its end; see `Settling`. */
  readonly settle: (run: AdmittedRun, end: RunEnd) => Settling
}

/** What the ledger's operations share in one process. */
interface LedgerParts {
  readonly pools: Effect.Effect.Success<typeof PgPools>
  readonly holder: Effect.Effect.Success<typeof LedgerHolder>
  readonly after: Effect.Effect.Success<typeof AfterSettlement>
  readonly fork: ReturnType<typeof Runtime.runFork<never>>
  readonly escrow: Escrow
  readonly limitedKeys: RecentKeys
  readonly queue: ReturnType<typeof makeSettlementQueue>
  readonly fastBatcher: Batcher<FastRequest, FastOutcome, SqlError>
  /** The fast way for runs of keys known to have limits: each batch under those keys' locks (Admission.ts). */
  readonly keyedBatcher: Batcher<FastRequest, FastOutcome, SqlError>
}

const unavailable = (error: SqlError) => unavailableOrDie(error)

/**
 * Admission failed for want of the database, perhaps after its statement committed: the run may be stored and
 * holding with no one to settle it. It is settled `pending` (holds released, nothing billed) once the database
 * answers again; a run that was never stored is left alone (nothing is stored again).
 */
const reconcile = ({ queue }: LedgerParts, run: PendingRun, holdCredit: boolean) =>
  Effect.sync(() => {
    queue.submit({
      ...settlementIdentity(run, holdCredit),
      recreate: false,
      end: { state: "pending", output: null, outputDigest: null, errorCode: null, errorMessage: null, calls: [] }
    })
  })

/** Admits a run the exact way (Admission.ts). */
const exactWith = (parts: LedgerParts) => (run: PendingRun): Effect.Effect<AdmissionOutcome, AdmissionError> =>
  Effect.gen(function*() {
    const decision = yield* Effect.catchAll(
      admitExact(parts.pools.asyncCommit, run),
      (error) => Effect.zipRight(reconcile(parts, run, false), unavailable(error))
    )
    for (const lease of decision.reclaimed) parts.escrow.observe(lease)
    const outcome = decision.outcome
    switch (outcome._tag) {
      case "Stored":
        return { _tag: "Admitted", run: { pending: run, holdCredit: outcome.holdCredit, reservation: undefined } } as const
      case "Replayed":
        return { _tag: "Replayed", run: outcome.existing } as const
      case "NoOrganization":
        return yield* Effect.dieMessage(`no organization ${run.organizationId}`)
      default:
        return yield* Effect.fail(refusal(outcome, run.idempotencyKey))
    }
  })

/** Admits a run its slice covered, in the next batch; what the batch could not store goes the exact way. */
const fastWith = (parts: LedgerParts, exact: ReturnType<typeof exactWith>) =>
(run: PendingRun, reservation: Reservation, keyed: boolean): Effect.Effect<AdmissionOutcome, AdmissionError> =>
  Effect.gen(function*() {
    const { escrow, limitedKeys, pools } = parts
    const batcher = keyed ? parts.keyedBatcher : parts.fastBatcher
    const outcome: FastOutcome | undefined = yield* Effect.catchAll(batcher.submit({ run, reservation }), (error) => {
      escrow.release(reservation)
      // A batch PostgreSQL rolled back for a conflict stored nothing: the exact way admits the run under its lock.
      if (isTransactionConflict(error as SqlError)) return Effect.succeed(undefined)
      return Effect.zipRight(reconcile(parts, run, reservation.holdCredit), unavailable(error as SqlError))
    })
    if (outcome === undefined) return yield* exact(run)
    if (outcome._tag === "Stored") {
      return { _tag: "Admitted", run: { pending: run, holdCredit: reservation.holdCredit, reservation } } as const
    }
    escrow.release(reservation)
    if (outcome._tag === "LeaseShort") return yield* exact(run)
    if (outcome._tag === "KeyLimited") {
      limitedKeys.add(run.keyId!, Date.now())
      return yield* exact(run)
    }
    const existing = outcome._tag === "KeyUsed"
      ? outcome.existing
      : yield* Effect.catchAll(undoRaced(pools.asyncCommit, { run, reservation }), unavailable)
    if (existing !== undefined && existing.input_digest === run.inputDigest) return { _tag: "Replayed", run: existing } as const
    // Another body under the key is a conflict only once the quota is known to cover the run (429 comes first),
    // which a slice that may have been revoked cannot tell: the exact way decides.
    return yield* exact(run)
  })

/** The run to store for a request admitted at `now`. */
const pendingRunOf = (request: AdmissionRequest, now: number, holder: string): PendingRun => ({
  id: uuidFromHex(uuidv7Hex(now)),
  organizationId: request.organizationId,
  origin: request.origin,
  idempotencyKey: request.idempotencyKey,
  kind: request.kind,
  inputDigest: request.inputDigest,
  period: periodOf(new Date(now)),
  holdMicros: request.holdMicros,
  holdTokens: request.holdTokens,
  createdAt: new Date(now),
  deadlineAt: new Date(request.deadline),
  holder,
  keyId: request.keyId
})

/** Admission: from this process's slice when it covers the run, else the exact way. */
const admitWith = (parts: LedgerParts): RunLedgerService["admit"] => {
  const exact = exactWith(parts)
  const fast = fastWith(parts, exact)
  const topUp = topUpWith(parts)
  const { escrow, holder, limitedKeys } = parts
  return (request) =>
    Effect.suspend((): Effect.Effect<AdmissionOutcome, AdmissionError> => {
      const now = Date.now()
      if (request.deadline <= now) {
        return Effect.fail(new DeadlineExceeded({ message: "the run's deadline passed before it could be admitted" }))
      }
      const run = pendingRunOf(request, now, holder.id())
      const needs: Needs = { micros: request.holdMicros, tokens: request.holdTokens }
      escrow.noteAdmission(request.organizationId, needs, now)
      // A run of a key seen with limits lately is batched under its key's lock; the first run of such a key finds
      // its limits in the plain batch (which stores no run of a key with limits) and goes the exact way.
      const keyed = request.keyId !== null && limitedKeys.has(request.keyId, now)
      const reservation = escrow.reserve(request.organizationId, run.period, needs)
      const grant = topUp(request.organizationId, run.period, request.holdMicros)
      if (reservation !== undefined) return fast(run, reservation, keyed)
      // A grant for the organization under way serves every run waiting for it, where each would otherwise take the
      // organization's lock in an exact admission of its own (a burst on organizations without slices). A first
      // grant is sized before the burst's rate is known: the runs it cannot cover wait for one more, sized by then.
      type Admitting = Effect.Effect<AdmissionOutcome, AdmissionError>
      const afterGrant = (underWay: Deferred.Deferred<void> | undefined, again: boolean): Admitting =>
        underWay === undefined ? exact(run) : Effect.zipRight(
          Deferred.await(underWay),
          Effect.suspend(() => {
            const granted = escrow.reserve(request.organizationId, run.period, needs)
            if (granted !== undefined) return fast(run, granted, keyed)
            return afterGrant(again ? topUp(request.organizationId, run.period, request.holdMicros) : undefined, false)
          })
        )
      return afterGrant(grant, true)
    })
}

/** Settlement through the queue; the account after it, and auto-recharge when it is due. */
const settleWith = ({ after, escrow, queue }: LedgerParts): RunLedgerService["settle"] => (run, end) => {
  const ticket = queue.submit({ ...settlementIdentity(run.pending, run.holdCredit), recreate: true, end })
  return {
    yieldTo: ticket.yieldTo,
    committed: Effect.flatMap(ticket.committed, (settled) => {
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
      return Effect.as(result.rechargeDue ? after(run.pending.organizationId, result) : Effect.void, result)
    })
  }
}

const make = Effect.gen(function*() {
  const pools = yield* PgPools
  const holder = yield* LedgerHolder
  const runtime = yield* Effect.runtime<never>()
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
    fork: Runtime.runFork(runtime),
    escrow,
    limitedKeys: new RecentKeys(LimitedKeyMemoryMs),
    queue: makeSettlementQueue(pools.main, LedgerBatches, runtime),
    fastBatcher,
    keyedBatcher
  }
  yield* returnLeasesWhenIdle(parts)
  return RunLedger.of({ admit: admitWith(parts), settle: settleWith(parts) })
})

/** The run ledger. */
export class RunLedger extends Context.Tag("RunLedger")<RunLedger, RunLedgerService>() {
  /** The ledger over the raw pools, this process's holder and what follows settlements. */
  static readonly layer = Layer.scoped(RunLedger, make)
}
