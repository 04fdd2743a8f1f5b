/**
 * Load shedding for the two routes that run the model (`POST /v1/runs`, `POST /v1/router/select`). When the process
 * is offered more runs than it can serve, the surplus queues (in the process, then in the socket before the service
 * even parses it), deadlines pass unseen, and every answer comes late. The guard counts the requests to those routes
 * the process is serving and watches the event loop's lag (a 10 ms timer that fires late when the loop is busy);
 * when `maxInFlight` are being served, or while the lag exceeds `maxLagMs`, it answers new requests to those routes
 * at once, before any parsing, credential check or database work: `504 deadline_exceeded` (the run could not start
 * in time; nothing was stored, so nothing is charged), with `x-request-id`, `Server-Timing` and CORS headers like
 * any answer. The shed answer costs a few microseconds, so the service keeps its deadlines for the requests it
 * takes. Other routes are never shed. The check order of the contract (credential first) applies to the requests
 * the service takes.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import type { Cors } from "./Cors.js"
import { requestIdFor } from "./RequestId.js"
import { serverTimingValue } from "./ServerTiming.js"

/** The routes whose requests may be shed (method and exact path). */
const Shedable = new Set(["POST /v1/runs", "POST /v1/router/select"])

const SampleEveryMs = 10

/** The message of a shed request. */
export const ShedMessage =
  "the service is overloaded and could not start the run before its deadline; nothing was stored or charged: " +
  "retry with backoff and a new idempotency key"

/** A running guard. */
export interface OverloadGuard {
  /** Answers the request when it must be shed; false when the service should handle it. */
  readonly shed: (request: IncomingMessage, response: ServerResponse) => boolean
  readonly stop: () => void
}

/** Starts a guard; `maxLagMs` 0 and `maxInFlight` 0 each turn their test off. */
export const startOverloadGuard = (
  options: { readonly maxLagMs: number; readonly maxInFlight: number; readonly cors: Cors }
): OverloadGuard => {
  let lag = 0
  let inFlight = 0
  let expected = performance.now() + SampleEveryMs
  const timer = setInterval(() => {
    const now = performance.now()
    lag = Math.max(now - expected, lag * 0.8)
    expected = now + SampleEveryMs
  }, SampleEveryMs)
  timer.unref()

  return {
    shed: (request, response) => {
      const path = request.url === undefined ? "" : request.url.split("?", 1)[0]!
      if (!Shedable.has(`${request.method} ${path}`)) return false
      const lagging = options.maxLagMs > 0 && lag > options.maxLagMs
      const full = options.maxInFlight > 0 && inFlight >= options.maxInFlight
      if (!lagging && !full) {
        inFlight++
        response.once("close", () => inFlight--)
        return false
      }
      const started = { started: Date.now(), startedPrecise: performance.now() }
      const header = request.headers["x-request-id"]
      const requestId = requestIdFor(Array.isArray(header) ? header[0] : header)
      const body = JSON.stringify({ error: { code: "deadline_exceeded", message: ShedMessage, request_id: requestId } })
      const origin = request.headers.origin
      response.writeHead(504, {
        ...options.cors.responseHeaders(origin),
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
        "x-request-id": requestId,
        "server-timing": serverTimingValue(started)
      })
      response.end(body)
      request.resume()
      return true
    },
    stop: () => clearInterval(timer)
  }
}
