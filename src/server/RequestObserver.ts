/**
 * What every request leaves behind once answered: a count and a latency by method, route template and status
 * (Metrics.ts), and, unless `ACCESS_LOG=false`, one access log line at info level (method, route, status, duration;
 * the request id and trace id through RequestLogContext.ts). It wraps the whole app, error mapping included, so the
 * status is the one sent; a request the overload guard sheds never reaches it (Overload.ts counts those). While
 * tracing is on it annotates the request's server span (ServerSpans.ts).
 */
import { Cause, Context, Effect, Exit, References } from "effect"
import { HttpServerError, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { count, httpRequestSeconds, httpRequests, labels, LabelSets, record } from "../telemetry/Metrics.js"
import { methodLabel, pathOf, type RouteLabeler } from "../http/RouteLabels.js"
import { annotateServerSpan, serverSpanOf } from "./ServerSpans.js"

/** The status counted for a request whose client went away before it was answered (nginx's convention). */
export const ClientClosedStatus = 499

const requestSeries = new LabelSets((key) => {
  const [method, route, status] = key.split(" ") as [string, string, string]
  return labels({ method, route, status })
})

const statusOf = (exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>): number => {
  if (Exit.isSuccess(exit)) return exit.value.status
  if (Cause.hasInterruptsOnly(exit.cause)) return ClientClosedStatus
  return HttpServerError.causeResponseStripped(exit.cause)[0].status
}

/**
 * The access line. Its fields are set on the request fiber's annotations outright (not scoped, as `annotateLogs`
 * would, at twice the cost): the fiber ends with the response.
 */
const accessLine = (method: string, route: string, status: number, durationMs: number) =>
  Effect.withFiber((fiber) => {
    fiber.setContext(Context.add(fiber.context, References.CurrentLogAnnotations, {
      ...fiber.getRef(References.CurrentLogAnnotations),
      method,
      route,
      status,
      duration_ms: Math.round(durationMs * 1000) / 1000
    }))
    return Effect.logInfo("request")
  })

/** What is left of one answered request: its count and latency, and (when `accessLog`) its access line. */
export const observeAnswer = (accessLog: boolean) =>
(method: string, route: string, status: number, durationMs: number): Effect.Effect<void> => {
  const label = methodLabel(method)
  const series = requestSeries.get(`${label} ${route} ${status}`)
  count(httpRequests, series)
  record(httpRequestSeconds, durationMs / 1000, series)
  return accessLog ? accessLine(label, route, status, durationMs) : Effect.void
}

/** Wraps an app so each request is counted, timed and (when `accessLog`) logged. */
export const observeRequests = (options: { readonly routes: RouteLabeler; readonly accessLog: boolean }) =>
<E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> => {
  const observe = observeAnswer(options.accessLog)
  return Effect.withFiber((fiber) => {
    const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
    const started = performance.now()
    const span = serverSpanOf(fiber)
    return Effect.onExit(app, (exit) => {
      const route = options.routes(request.method, pathOf(request.url))
      const status = statusOf(exit)
      if (span !== undefined) annotateServerSpan(span, route, status)
      return observe(request.method, route, status, performance.now() - started)
    })
  })
}
