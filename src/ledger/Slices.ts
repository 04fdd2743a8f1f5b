/**
 * The slices one process keeps (Escrow.ts holds them in memory, Leases.ts writes their leases): topped up in the
 * background when they run low, one grant at a time per organization, which admissions no slice covers can wait for
 * (AdmissionFlow.ts, `admitWith`); returned when unused for `IdleLeaseSeconds`, and all of them when the process
 * stops.
 */
import { Effect, Exit, Schedule } from "effect"
import { type Completion, makeCompletion } from "./Completion.js"
import type { LedgerParts } from "./LedgerParts.js"
import { grantLease, returnLeases } from "./Leases.js"

/** How long a slice may go unused before it is returned. */
export const IdleLeaseSeconds = 15

/** What keeping the slices needs of the ledger. */
type SliceParts = Pick<LedgerParts, "escrow" | "fork" | "holder" | "pools">

/**
 * Tops an organization's slice up in the background when it runs low (one grant at a time per organization); gives
 * the grant under way for the organization, if any, done once it has committed or failed.
 */
export const topUpWith = ({ escrow, fork, holder, pools }: SliceParts) => {
  const granting = new Map<string, Completion<void, never>>()
  return (organizationId: string, period: string, ceiling: number): Completion<void, never> | undefined => {
    const underWay = granting.get(organizationId)
    if (underWay !== undefined || !escrow.wantsTopUp(organizationId, period, ceiling)) return underWay
    const done = makeCompletion<void, never>()
    granting.set(organizationId, done)
    fork(
      grantLease(pools.main, holder.id(), organizationId, period, escrow.target(organizationId, ceiling)).pipe(
        Effect.tap((lease) => Effect.sync(() => lease !== undefined && escrow.observe(lease))),
        Effect.catch((error) => Effect.logWarning("could not top up a lease", error.message)),
        Effect.ensuring(Effect.sync(() => {
          granting.delete(organizationId)
          done.complete(Exit.void)
        }))
      )
    )
    return done
  }
}

/** Returns idle slices every `IdleLeaseSeconds`, and every slice when the process stops. */
export const returnLeasesWhenIdle = ({ escrow, holder, pools }: Omit<SliceParts, "fork">) =>
  Effect.gen(function*() {
    yield* Effect.addFinalizer(() =>
      returnLeases(pools.main, holder.id()).pipe(Effect.timeout("5 seconds"), Effect.ignore)
    )
    yield* Effect.suspend(() => {
      const idle = escrow.takeIdle(Date.now() - IdleLeaseSeconds * 1000)
      return idle.length === 0 ? Effect.void : returnLeases(pools.main, holder.id(), idle)
    }).pipe(
      Effect.catch((error) => Effect.logWarning("could not return idle leases", error.message)),
      Effect.repeat(Schedule.spaced(`${IdleLeaseSeconds} seconds`)),
      Effect.forkScoped
    )
  })
