/**
 * The server span of each request, named as OpenTelemetry's HTTP semantic conventions say: `{method} {route}` (the
 * route's template, never the raw path), `{method}` for a path no route serves, `HTTP` for a method outside the
 * standard set. The platform's tracer (HttpMiddleware.tracer) sets the request's attributes; the request observer
 * (RequestObserver.ts) adds `http.route` and, on a 5xx, `error.type` (`annotateServerSpan`). With tracing off no span
 * and no name are made.
 */
import { Context, Effect, type Fiber, Option, References, Tracer } from "effect"
import { HttpMiddleware, type HttpServerRequest } from "effect/http"
import { Boundary } from "../http/Boundary.js"
import { makeRouteLabeler, methodLabel, pathOf, type RouteLabeler, UnmatchedRoute } from "../http/RouteLabels.js"

/** The span name of a request: `{method} {route}`, `{method}` when no route serves it, `HTTP` for an odd method. */
export const serverSpanName = (routes: RouteLabeler) => (request: HttpServerRequest.HttpServerRequest): string => {
  const method = methodLabel(request.method)
  if (method === "OTHER") return "HTTP"
  const route = routes(request.method, pathOf(request.url))
  return route === UnmatchedRoute ? method : `${method} ${route}`
}

/** Builds a request handler whose server spans are named by `serverSpanName`, over the boundary's routes. */
export const withServerSpanNames = <A, E, R>(makeHandler: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | Boundary> =>
  Effect.gen(function*() {
    const { table } = yield* Boundary
    return yield* Effect.provideService(makeHandler, HttpMiddleware.SpanNameGenerator, serverSpanName(makeRouteLabeler(table.routes)))
  })

/** The server span the fiber's request runs in, if tracing made one. */
export const serverSpanOf = (fiber: Fiber.Fiber<unknown, unknown>): Tracer.Span | undefined => {
  if (!fiber.getRef(References.TracerEnabled)) return undefined
  const span = Context.getOption(fiber.context, Tracer.ParentSpan)
  return Option.isSome(span) && span.value._tag === "Span" && span.value.kind === "server" ? span.value : undefined
}

/** Adds `http.route` (unless no route serves the request) and, on a 5xx, `error.type` to a server span. */
export const annotateServerSpan = (span: Tracer.Span, route: string, status: number): void => {
  if (route !== UnmatchedRoute) span.attribute("http.route", route)
  if (status >= 500) span.attribute("error.type", String(status))
}
