/**
 * The listener's graceful stop (SIGTERM or SIGINT), in phases, each logged on one line: draining (`/readyz` answers
 * 503 while the listener keeps serving for `SHUTDOWN_DRAIN_MS`, so load balancers stop sending; every answer carries
 * `Connection: close`); stopped accepting (the sockets and idle connections close; requests in flight have
 * `SHUTDOWN_TIMEOUT_MS` to finish); closed (every connection closed, or those left are closed at the timeout). The
 * run ledger's finalizer then settles what is queued (src/ledger/RunLedger.ts), and the process exits 0.
 */
import { Effect, Option } from "effect"
import type { IncomingMessage, Server, ServerResponse } from "node:http"
import type { LifecycleService } from "../health/Lifecycle.js"
import type { StopAccepting } from "./SharedPort.js"

/**
 * The graceful stop of `server`, marking `lifecycle` stopping as it begins: `track` counts a request until its answer
 * is done (once stopping, its answer closes the connection); `stop` runs the phases, once, as the listener's release.
 */
export const makeDrain = (options: {
  readonly server: Server
  readonly lifecycle: LifecycleService
  readonly drainMs: number
  readonly timeoutMs: number
}) => {
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
