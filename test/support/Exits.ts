/**
 * The one reason an exit failed for, for assertions that a failure is exactly one typed error or one defect (Effect
 * 4's `Cause` is a flat list of reasons): undefined for a success or a cause of any other number of reasons.
 */
import { type Cause, Exit } from "effect"

/** The exit's only reason, when it failed for exactly one. */
export const onlyReason = <A, E>(exit: Exit.Exit<A, E>): Cause.Reason<E> | undefined =>
  Exit.isFailure(exit) && exit.cause.reasons.length === 1 ? exit.cause.reasons[0] : undefined
