/**
 * The listener's graceful stop (SIGTERM or SIGINT), in phases, each logged on one line:
 *
 *   1. draining: `/readyz` answers 503 at once (Lifecycle.ts) while the listener keeps accepting and serving for
 *      `SHUTDOWN_DRAIN_MS`, the time load balancers need to see the instance unready and send it nothing new; every
 *      answer from now on carries `Connection: close`, so keep-alive clients reconnect (to another instance);
 *   2. stopped accepting: the listening sockets close (a new connection is refused) and idle connections close; the
 *      requests in flight, runs included, have `SHUTDOWN_TIMEOUT_MS` to finish;
 *   3. closed: every connection has closed, or the timeout closes those left (their runs end as a dropped
 *      connection ends them).
 *
 * The settlement of runs still queued comes next (the run ledger's finalizer, src/ledger/RunLedger.ts), then the
 * rest of the server stops and the process exits 0.
 */
import { Effect, Option } from "effect"
import type { IncomingMessage, Server, ServerResponse } from "node:http"
import type { LifecycleService } from "../health/Lifecycle.js"
import type { StopAccepting } from "./SharedPort.js"

/** A server's graceful stop. */
export interface Drain {
  /** Counts a request until its answer is done; once stopping, its answer closes the connection. */
  readonly track: (request: IncomingMessage, response: ServerResponse) => void
  /** The phases, run once as the listener's release. */
  readonly stop: (stopAccepting: StopAccepting) => Effect.Effect<void>
}

/** The graceful stop of `server`, marking `lifecycle` stopping as it begins. */
export const makeDrain = (options: {
  readonly server: Server
  readonly lifecycle: LifecycleService
  readonly drainMs: number
  readonly timeoutMs: number
}): Drain => {
  const { lifecycle, server } = options
  let inFlight = 0
  const track = (_request: IncomingMessage, response: ServerResponse) => {
    inFlight++
    response.once("close", () => inFlight--)
    if (lifecycle.stopping()) response.setHeader("connection", "close")
  }
  const stop = (stopAccepting: StopAccepting) =>
    Effect.gen(function*() {
      lifecycle.beginStopping()
      yield* Effect.logInfo(
        `shutdown: draining; /readyz answers 503, serving ${options.drainMs} ms more (SHUTDOWN_DRAIN_MS)`
      )
      if (options.drainMs > 0) yield* Effect.sleep(options.drainMs)
      let closed!: () => void
      const allClosed = new Promise<void>((resolve) => (closed = resolve))
      lifecycle.setDeadline(Date.now() + options.timeoutMs)
      stopAccepting(() => closed())
      server.closeIdleConnections()
      yield* Effect.logInfo(
        `shutdown: stopped accepting; ${inFlight} requests in flight, ${options.timeoutMs} ms to finish (SHUTDOWN_TIMEOUT_MS)`
      )
      const finished = yield* Effect.promise(() => allClosed).pipe(Effect.timeoutOption(options.timeoutMs))
      if (Option.isNone(finished)) {
        yield* Effect.logWarning(`shutdown: ${inFlight} requests still in flight after ${options.timeoutMs} ms; closing their connections`)
        server.closeAllConnections()
        yield* Effect.promise(() => allClosed)
      }
      yield* Effect.logInfo("shutdown: every connection closed")
    })
  return { track, stop }
}
