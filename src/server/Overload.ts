/**
 * Load shedding for the two routes that run the model (`POST /v1/runs`, `POST /v1/router/select`), below the framework.
 * A process offered more runs than it can serve queues the surplus (in the process, then in the socket), and every
 * answer comes late. The guard counts the requests to those routes the process is serving and holds those using it
 * (not waiting on the upstream model: providers/UpstreamWaits.ts) under an adaptive limit (ConcurrencyLimit.ts), and
 * all of them under `maxInFlight`; past either, or while the event loop lags more than `maxLagMs`, a new request is
 * answered at once, before any parsing or database work: `503 no_route_available` with `Retry-After` (nothing was
 * stored, so nothing is charged), `x-request-id`, `Server-Timing` and CORS headers like any answer. A request with a
 * body is decided only once its body has been read (ShedOnceRead.ts), so slow uploads hold no place. Other routes
 * are never shed. A request the guard answers itself is counted (`arbiter_http_shed_total` by reason, and as a 503 in
 * the request and run metrics) but not access-logged: shedding exists to spend nothing on it. One whose body the API
 * read is counted here as shed, and answered, counted and logged by the API like its other refusals.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import type { Cors } from "../http/Cors.js"
import { count, httpRequestSeconds, httpRequests, labels, record, runs, shedRequests } from "../telemetry/Metrics.js"
import { AdaptiveLimit, DefaultLimitOptions } from "./ConcurrencyLimit.js"
import { requestIdFor } from "../http/RequestId.js"
import { hasBody } from "../http/RequestShape.js"
import { serverTimingValue } from "../http/ServerTiming.js"
import { deferUntilRead, ShedMessage, ShedRetryAfterSeconds } from "../http/ShedOnceRead.js"
import { waitingOnUpstream } from "../providers/UpstreamWaits.js"

/** The routes whose requests may be shed (method and exact path). */
const Shedable = new Set(["POST /v1/runs", "POST /v1/router/select"])

/** How often the event loop's lag is sampled while the shedable routes are being asked, and otherwise. */
const SampleEveryMs = 20
const IdleSampleEveryMs = 100

/** How much of the lag seen remains after each millisecond without a new stall (a fifth is gone every 10 ms). */
const LagDecayPerMs = 0.8 ** (1 / 10)

/** The sampler slows down once the shedable routes have not been asked for this long. */
const IdleAfterMs = 2_000

/**
 * The event loop's lag (ms, decaying with time), sampled every `SampleEveryMs` while the shedable routes are being
 * asked and every `IdleSampleEveryMs` otherwise (a fast timer would cost an idle process more CPU than all its other
 * background work); a lag that matters, a stall of tens of milliseconds and more, is seen by the first sample after it.
 */
class LagSampler {
  lag = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private expected = 0
  private period = IdleSampleEveryMs
  private lastAsked = -Infinity

  constructor() {
    this.schedule(performance.now())
  }

  /** Notes a request to a shedable route (at `now`, performance.now()), sampling at the fast pace from now on. */
  asked(now: number): void {
    this.lastAsked = now
    if (this.period === SampleEveryMs || this.timer === undefined) return
    // The slow sample due now, if overdue, still counts: a stall that just ended is seen before the request is served.
    this.lag = Math.max(now - this.expected, this.lag)
    clearTimeout(this.timer)
    this.period = SampleEveryMs
    this.schedule(now)
  }

  stop(): void {
    clearTimeout(this.timer)
    this.timer = undefined
  }

  private schedule(now: number): void {
    this.expected = now + this.period
    this.timer = setTimeout(this.sample, this.period)
    this.timer.unref()
  }

  private readonly sample = () => {
    const now = performance.now()
    this.lag = Math.max(now - this.expected, this.lag * LagDecayPerMs ** (now - this.expected + this.period))
    this.period = now - this.lastAsked > IdleAfterMs ? IdleSampleEveryMs : SampleEveryMs
    this.schedule(now)
  }
}

/** How long (ms) one reading of the event loop's utilization stands. */
const UtilizationWindowMs = 100

/** The event loop's utilization over its last window of `UtilizationWindowMs` (read at most once per window). */
class LoopUtilization {
  private last = performance.eventLoopUtilization()
  private lastAt = performance.now()
  private value = 0

  readonly recent = (): number => {
    const now = performance.now()
    if (now - this.lastAt >= UtilizationWindowMs) {
      const current = performance.eventLoopUtilization()
      this.value = performance.eventLoopUtilization(current, this.last).utilization
      this.last = current
      this.lastAt = now
    }
    return this.value
  }
}

const UpstreamTiming = /upstream;dur=([0-9.]+)/

/** The time a request spent waiting for the upstream model, from its `Server-Timing` (0 when it has none). */
const upstreamMs = (response: ServerResponse): number => {
  const header = response.getHeader("server-timing")
  const match = typeof header === "string" ? UpstreamTiming.exec(header) : null
  return match === null ? 0 : Number(match[1])
}

/** Each shedable route's series, built once. */
const shedSeries = new Map([...Shedable].map((key) => {
  const route = key.slice(key.indexOf(" ") + 1)
  return [key, {
    lag: labels({ route, reason: "lag" }),
    limit: labels({ route, reason: "limit" }),
    request: labels({ method: "POST", route, status: "503" }),
    run: labels({ route, outcome: "shed", code: "no_route_available" })
  }] as const
}))

/** Counts a shed request; as a request too when the guard `answered` it (the API counts the one it answers). */
const countShed = (key: string, lagging: boolean, answered: boolean): void => {
  const series = shedSeries.get(key)!
  count(shedRequests, lagging ? series.lag : series.limit)
  count(runs, series.run)
  if (!answered) return
  count(httpRequests, series.request)
  record(httpRequestSeconds, 0, series.request)
}

/** Answers a shed request at once: `503 no_route_available` with `Retry-After`, its request id, timing and CORS. */
const answerShed = (request: IncomingMessage, response: ServerResponse, cors: Cors): void => {
  const started = { started: Date.now(), startedPrecise: performance.now() }
  const requestId = requestIdFor(request.headers["x-request-id"])
  const body = JSON.stringify({ error: { code: "no_route_available", message: ShedMessage, request_id: requestId } })
  response.writeHead(503, {
    ...cors.responseHeaders(request.headers.origin),
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    "retry-after": String(ShedRetryAfterSeconds),
    "x-request-id": requestId,
    "server-timing": serverTimingValue(started)
  })
  response.end(body)
  request.resume()
}

export interface OverloadGuard {
  /** Answers the request when it must be shed now; false when the service should handle it. */
  readonly shed: (request: IncomingMessage, response: ServerResponse) => boolean
  /**
   * Defers the decision on a request to a shedable route until its body has been read (`takeOnceRead`); a request
   * without a body is decided at once. True when it was answered (shed) at once.
   */
  readonly shedOnceRead: (request: IncomingMessage, response: ServerResponse) => boolean
  readonly stop: () => void
  readonly limit: () => number
  readonly inFlight: () => number
  /** Of the shedable requests in flight, those using the process (not waiting on the upstream model). */
  readonly using: () => number
}

/** The `METHOD path` of a request when its route is shedable. */
const shedableKey = (request: IncomingMessage): string | undefined => {
  const path = request.url === undefined ? "" : request.url.split("?", 1)[0]!
  const key = `${request.method} ${path}`
  return Shedable.has(key) ? key : undefined
}

/**
 * Starts a guard; `maxLagMs` 0 turns the lag test off; `maxInFlight` 0 turns the limit off; `budgetMs` is the own time
 * per request the adaptive limit keeps requests within, `warmupMs` how long after its first completion it does not
 * shrink (defaults: DefaultLimitOptions').
 */
export const startOverloadGuard = (
  options: {
    readonly maxLagMs: number
    readonly maxInFlight: number
    readonly budgetMs?: number
    readonly warmupMs?: number
    readonly cors: Cors
  }
): OverloadGuard => {
  const sampler = options.maxLagMs > 0 ? new LagSampler() : undefined
  const loop = new LoopUtilization()
  const limit = new AdaptiveLimit({
    loopBusy: loop.recent,
    ...DefaultLimitOptions,
    initial: Math.min(DefaultLimitOptions.initial, Math.max(1, options.maxInFlight)),
    min: Math.min(DefaultLimitOptions.min, Math.max(1, options.maxInFlight)),
    max: Math.max(1, options.maxInFlight),
    budgetMs: options.budgetMs ?? DefaultLimitOptions.budgetMs,
    warmupMs: options.warmupMs ?? DefaultLimitOptions.warmupMs
  })
  const counts = { inFlight: 0 }
  const decide = decider(options, sampler, limit, counts)
  const shed = (request: IncomingMessage, response: ServerResponse): boolean => {
    const key = shedableKey(request)
    if (key === undefined) return false
    const lagging = decide(response)
    if (lagging === undefined) return false
    countShed(key, lagging, true)
    answerShed(request, response, options.cors)
    return true
  }
  return {
    shed,
    shedOnceRead: (request, response) => {
      const key = shedableKey(request)
      if (key === undefined) return false
      if (!hasBody(request.headers)) return shed(request, response)
      deferUntilRead(request, (answerHere) => {
        if (answerHere) return !shed(request, response)
        const lagging = decide(response)
        if (lagging === undefined) return true
        countShed(key, lagging, false)
        return false
      })
      return false
    },
    stop: () => sampler?.stop(),
    limit: () => limit.limit,
    inFlight: () => counts.inFlight,
    using: () => counts.inFlight - waitingOnUpstream()
  }
}

/**
 * The guard's decision on one request: undefined when it is taken (then counted until its response closes, and its
 * own time recorded by the adaptive limit), else whether it is shed for the loop's lag (true) or the limit (false).
 */
const decider = (
  options: { readonly maxLagMs: number; readonly maxInFlight: number },
  sampler: LagSampler | undefined,
  limit: AdaptiveLimit,
  counts: { inFlight: number }
) =>
(response: ServerResponse): boolean | undefined => {
  const now = performance.now()
  sampler?.asked(now)
  const lagging = sampler !== undefined && sampler.lag > options.maxLagMs
  const using = counts.inFlight - waitingOnUpstream()
  const full = options.maxInFlight > 0 && (counts.inFlight >= options.maxInFlight || using >= limit.limit)
  if (lagging || full) return lagging
  counts.inFlight++
  const at = using + 1
  response.once("close", () => {
    counts.inFlight--
    if (options.maxInFlight > 0) {
      const ended = performance.now()
      limit.record(ended - now - upstreamMs(response), at, ended)
    }
  })
  return undefined
}
