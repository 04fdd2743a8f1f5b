/**
 * How many of this process's requests wait on the upstream model now. The overload guard (server/Overload.ts) holds
 * the requests *using* the process (in flight, less these) under its adaptive limit: the limit follows each request's
 * own time, its time less the upstream's, and by Little's law the completion rate times that budget is the number of
 * requests in their own time at once, not of requests in flight. Counting those that wait on the upstream against
 * it would shed runs the process has room for whenever the model is slow (behind a 3 s model, a saturated process
 * completing 400 runs a second would get a limit of 200 in flight, that is 67 runs a second), and it raised the limit
 * while they waited (their own time tiny, the limit reached) for whatever wave of fast runs came next. (The late
 * answers of the first wave of `npm run bench:runs`'s overload row wait in admission, not here: docs/ledger.md.)
 */

let waiting = 0

/** A request starts waiting on the upstream model (the upstream part of its `Server-Timing`). */
export const enterUpstream = (): void => {
  waiting++
}

/** It stops waiting (however the wait ended). */
export const leaveUpstream = (): void => {
  waiting--
}

/** The requests waiting on the upstream model now. */
export const waitingOnUpstream = (): number => waiting
