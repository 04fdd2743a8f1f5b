/**
 * The server span of each request, as OpenTelemetry's HTTP semantic conventions name and describe it: named
 * `{method} {route}` (`POST /v1/runs`: the route's template, never the raw path, so span names stay few), or only
 * `{method}` for a path no route serves, and `HTTP` for a method outside the standard set. The platform's tracer
 * (HttpMiddleware.tracer) sets `http.request.method`, `url.path`, `url.scheme`, `server.address`, `server.port`,
 * `user_agent.original`, `client.address` and `http.response.status_code`; `annotateServerSpan` adds `http.route`
 * and, on a 5xx answer, `error.type` (the status code, as the conventions say when no other error class is known).
 * With tracing off both cost nothing: the tracer makes no span and the annotation is skipped.
 */
import { Cause, Context, Effect, Exit, References, Tracer } from "effect"
import { HttpServerError, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { methodLabel, pathOf, type RouteLabeler, UnmatchedRoute } from "./RouteLabels.js"

/** The span name of a request: `{method} {route}`, `{method}` when no route serves it, `HTTP` for an odd method. */
export const serverSpanName = (routes: RouteLabeler) => (request: HttpServerRequest.HttpServerRequest): string => {
  const method = methodLabel(request.method)
  if (method === "OTHER") return "HTTP"
  const route = routes(request.method, pathOf(request.url))
  return route === UnmatchedRoute ? method : `${method} ${route}`
}

const statusOf = (exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>): number | undefined =>
  Exit.isSuccess(exit)
    ? exit.value.status
    : Cause.hasInterruptsOnly(exit.cause)
    ? undefined
    : HttpServerError.causeResponseStripped(exit.cause)[0].status

/** Adds `http.route` and, on a 5xx, `error.type` to the request's server span (the app runs inside the tracer). */
export const annotateServerSpan = (routes: RouteLabeler) =>
<E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.withFiber((fiber) => {
    if (!fiber.getRef(References.TracerEnabled)) return app
    const span = Context.getOption(fiber.context, Tracer.ParentSpan)
    if (span._tag === "None" || span.value._tag !== "Span") return app
    const server = span.value
    const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
    const route = routes(request.method, pathOf(request.url))
    if (route !== UnmatchedRoute) server.attribute("http.route", route)
    return Effect.onExit(app, (exit) =>
      Effect.sync(() => {
        const status = statusOf(exit)
        if (status !== undefined && status >= 500) server.attribute("error.type", String(status))
      }))
  })
