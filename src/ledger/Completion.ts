/**
 * A result that arrives once, waited for by fibers, for the waits on the run's hot path (admission's batch,
 * settlement's commit): what `Deferred` does, without the interruption handler `Deferred.await` registers with every
 * wait (a finalizer on the fiber's stack). An interrupted waiter's callback stays on the list until the result
 * arrives, and is then called for a fiber that has moved on, which ignores it. A wait after the result resumes at once.
 */
import { Effect, type Exit } from "effect"

/** A result that arrives once. */
export interface Completion<A, E> {
  readonly wait: Effect.Effect<A, E>
  /** Delivers the result to every waiter, now and later; a second call is ignored. */
  readonly complete: (exit: Exit.Exit<A, E>) => void
}

/** A completion not completed yet. */
export const makeCompletion = <A, E>(): Completion<A, E> => {
  let result: Exit.Exit<A, E> | undefined
  let waiters: Array<(exit: Exit.Exit<A, E>) => void> | undefined
  const listen = (callback: (exit: Exit.Exit<A, E>) => void): void => {
    if (result !== undefined) return callback(result)
    ;(waiters ??= []).push(callback)
  }
  return {
    wait: Effect.callback<A, E>((resume) => listen(resume)),
    complete: (exit) => {
      if (result !== undefined) return
      result = exit
      const waiting = waiters
      waiters = undefined
      if (waiting !== undefined) for (const resume of waiting) resume(exit)
    }
  }
}
