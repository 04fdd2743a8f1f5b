/**
 * How many of this process's requests wait on the upstream model now. The overload guard (server/Overload.ts) holds
 * the requests *using* the process (in flight, less these) under its adaptive limit, which follows each request's
 * own time (its time less the upstream's): by Little's law that limit counts requests in their own time at once, so
 * counting those waiting on a slow model against it would shed runs the process has room for.
 */

let waiting = 0

/** A request starts waiting on the upstream model (the upstream part of its `Server-Timing`). */
export const enterUpstream = (): void => void waiting++

/** It stops waiting (however the wait ended). */
export const leaveUpstream = (): void => void waiting--

/** The requests waiting on the upstream model now. */
export const waitingOnUpstream = (): number => waiting
