/**
 * What every request leaves behind once answered: a count and a latency by method, route template and status
 * (Metrics.ts), and, unless `ACCESS_LOG=false`, one access log line at info level (method, route, status, duration;
 * the request id and trace id through RequestLogContext.ts). It wraps the whole app, error mapping included, so the
 * status is the one sent; a request the overload guard sheds never reaches it (Overload.ts counts those).
 *
 * The server span of each request is named as OpenTelemetry's HTTP semantic conventions say: `{method} {route}` (the
 * route's template, never the raw path), `{method}` for a path no route serves, `HTTP` for a method outside the
 * standard set. The platform's tracer (HttpMiddleware.tracer) sets the request's attributes; the observer adds
 * `http.route` and, on a 5xx, `error.type`. With tracing off no span and no name are made.
 */
import { Cause, Context, Effect, Exit, type Fiber, Option, References, Tracer } from "effect"
import { HttpMiddleware, HttpServerError, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { Boundary } from "../http/Boundary.js"
import { count, httpRequestSeconds, httpRequests, labels, LabelSets, record } from "../telemetry/Metrics.js"
import { makeRouteLabeler, methodLabel, pathOf, type RouteLabeler, UnmatchedRoute } from "../http/RouteLabels.js"

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

/** The span name of a request: `{method} {route}`, `{method}` when no route serves it, `HTTP` for an odd method. */
export const serverSpanName = (routes: RouteLabeler) => (request: HttpServerRequest.HttpServerRequest): string => {
  const method = methodLabel(request.method)
  if (method === "OTHER") return "HTTP"
  const route = routes(request.method, pathOf(request.url))
  return route === UnmatchedRoute ? method : `${method} ${route}`
}

/** Builds a request handler whose server spans are named by `serverSpanName`, over the boundary's routes. */
export const withServerSpanNames = <A, E, R>(makeHandler: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | Boundary> =>
  Effect.flatMap(Boundary, ({ table }) =>
    Effect.provideService(makeHandler, HttpMiddleware.SpanNameGenerator, serverSpanName(makeRouteLabeler(table.routes))))

/** The server span the fiber's request runs in, if tracing made one. */
const serverSpanOf = (fiber: Fiber.Fiber<unknown, unknown>): Tracer.Span | undefined => {
  if (!fiber.getRef(References.TracerEnabled)) return undefined
  const span = Context.getOption(fiber.context, Tracer.ParentSpan)
  return Option.isSome(span) && span.value._tag === "Span" && span.value.kind === "server" ? span.value : undefined
}

/** Adds `http.route` (unless no route serves the request) and, on a 5xx, `error.type` to a server span. */
const annotateServerSpan = (span: Tracer.Span, route: string, status: number): void => {
  if (route !== UnmatchedRoute) span.attribute("http.route", route)
  if (status >= 500) span.attribute("error.type", String(status))
}
