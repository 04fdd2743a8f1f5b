/**
 * Admission's flow (docs/ledger.md, Admission: escrow): a run is admitted from this process's slice when it covers
 * the run, stored in the next fast batch (FastAdmission.ts); a run no slice covers waits for a lease grant already
 * under way for its organization, or goes the exact way under the organization's lock (Admission.ts), as does every
 * run a batch could not store. A batch that failed for want of the database is reconciled: the run, perhaps stored,
 * is settled `pending` once the database answers.
 */
import { Cause, Effect, Exit, Result } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { DeadlineExceeded } from "../../schema/Errors.js"
import { isTransactionConflict, unavailableOrDie } from "../db/Unavailable.js"
import { uuidFromHex, uuidv7Hex } from "../ids/Ids.js"
import { admitExact, type PendingRun } from "./Admission.js"
import type { Needs, Reservation } from "./Escrow.js"
import type { Completion } from "./Completion.js"
import { type FastOutcome, ownerOf } from "./FastAdmission.js"
import { type AdmissionError, type AdmissionOutcome, type AdmissionRequest, type LedgerParts } from "./LedgerParts.js"
import { periodOf } from "./QuotaLedger.js"
import { refusal } from "./Refusals.js"
import { topUpWith } from "./Slices.js"

/**
 * Admission failed for want of the database, perhaps after its statement committed: the run may be stored and
 * holding with no one to settle it. It is settled `pending` (holds released, nothing billed) once the database
 * answers again; a run that was never stored is left alone (nothing is stored again).
 */
const reconcile = ({ queue }: LedgerParts, run: PendingRun, holdCredit: boolean) =>
  Effect.sync(() => {
    queue.submit({
      ...run,
      holdCredit,
      recreate: false,
      end: { state: "pending", output: null, outputDigest: null, errorCode: null, errorMessage: null, calls: [] }
    })
  })

/** Admits a run the exact way (Admission.ts). */
const exactWith = (parts: LedgerParts) => (run: PendingRun): Effect.Effect<AdmissionOutcome, AdmissionError> =>
  Effect.gen(function*() {
    const decision = yield* Effect.catch(
      admitExact(parts, parts.pools.asyncCommit, run),
      (error) => Effect.andThen(reconcile(parts, run, false), unavailableOrDie(error))
    )
    for (const lease of decision.reclaimed) parts.escrow.observe(lease)
    const outcome = decision.outcome
    switch (outcome._tag) {
      case "Stored":
        return { _tag: "Admitted", run: { pending: run, holdCredit: outcome.holdCredit, reservation: undefined } } as const
      case "Replayed":
        return { _tag: "Replayed", run: outcome.existing } as const
      case "NoOrganization":
        return yield* Effect.die(new Error(`no organization ${run.organizationId}`))
      default:
        return yield* Effect.fail(refusal(outcome, run.idempotencyKey))
    }
  })

/**
 * What a fast batch's outcome for a run that it did not store means: the exact way decides (a lease short, a key
 * with limits, a key used by another body, a conflict PostgreSQL rolled back), or the run owning the key is replayed,
 * or the database is away (the run is reconciled).
 */
const afterFastWith = (parts: LedgerParts, exact: ReturnType<typeof exactWith>) =>
(run: PendingRun, reservation: Reservation, exit: Exit.Exit<FastOutcome, SqlError>): Effect.Effect<AdmissionOutcome, AdmissionError> =>
  Effect.gen(function*() {
    const { escrow, limitedKeys, pools } = parts
    escrow.release(reservation)
    if (Exit.isFailure(exit)) {
      const failure = Cause.findError(exit.cause)
      // A batch that died (no failure in its cause) fails the run with the same cause, a defect.
      if (Result.isFailure(failure)) return yield* Effect.failCause(failure.failure)
      const error = failure.success
      // A batch PostgreSQL rolled back for a conflict stored nothing: the exact way admits the run under its lock.
      if (isTransactionConflict(error)) return yield* exact(run)
      return yield* Effect.andThen(reconcile(parts, run, reservation.holdCredit), unavailableOrDie(error))
    }
    const outcome = exit.value
    if (outcome._tag === "LeaseShort") return yield* exact(run)
    if (outcome._tag === "KeyLimited") {
      limitedKeys.add(run.keyId!, Date.now())
      return yield* exact(run)
    }
    const existing = outcome._tag === "KeyUsed"
      ? outcome.existing
      : yield* Effect.catch(ownerOf(pools.asyncCommit, run), unavailableOrDie)
    if (existing !== undefined && existing.input_digest === run.inputDigest) return { _tag: "Replayed", run: existing } as const
    // Another body under the key is a conflict only once the quota is known to cover the run (429 comes first),
    // which a slice that may have been revoked cannot tell: the exact way decides.
    return yield* exact(run)
  })

/**
 * Admits a run its slice covered, in the next batch: a run the batch stored is admitted; anything else is decided by
 * `afterFast`.
 */
const fastWith = (parts: LedgerParts, afterFast: ReturnType<typeof afterFastWith>) =>
(run: PendingRun, reservation: Reservation, keyed: boolean): Effect.Effect<AdmissionOutcome, AdmissionError> =>
  Effect.flatMap(Effect.exit((keyed ? parts.keyedBatcher : parts.fastBatcher).submit({ run, reservation })), (exit) =>
    Exit.isSuccess(exit) && exit.value._tag === "Stored"
      ? Effect.succeed({ _tag: "Admitted", run: { pending: run, holdCredit: reservation.holdCredit, reservation } } as const)
      : afterFast(run, reservation, exit))

/** The run to store for a request admitted at `now`. */
const pendingRunOf = (request: AdmissionRequest, now: number, holder: string): PendingRun => ({
  ...request,
  id: uuidFromHex(uuidv7Hex(now)),
  period: periodOf(new Date(now)),
  createdAt: new Date(now),
  deadlineAt: new Date(request.deadline),
  holder
})

/** Admission: from this process's slice when it covers the run, else the exact way. */
export const admitWith = (parts: LedgerParts) => {
  const exact = exactWith(parts)
  const fast = fastWith(parts, afterFastWith(parts, exact))
  const topUp = topUpWith(parts)
  const { escrow, holder, limitedKeys } = parts
  return (request: AdmissionRequest): Effect.Effect<AdmissionOutcome, AdmissionError> =>
    Effect.suspend(() => {
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
      const afterGrant = (underWay: Completion<void, never> | undefined, again: boolean): Effect.Effect<AdmissionOutcome, AdmissionError> =>
        underWay === undefined ? exact(run) : Effect.flatMap(underWay.wait, () => {
          const granted = escrow.reserve(request.organizationId, run.period, needs)
          if (granted !== undefined) return fast(run, granted, keyed)
          return afterGrant(again ? topUp(request.organizationId, run.period, request.holdMicros) : undefined, false)
        })
      return afterGrant(grant, true)
    })
}
