/**
 * Serves the router an HttpApi and the pages beside it are registered on (HttpRouter, with the boundary of
 * Boundary.ts) on a Node HTTP server. Everything the routes need is built, and the request handler attached, before
 * the server listens, so no connection reaches a server without a handler. Each request passes the body deadline
 * (BodyDeadline.ts), then the overload guard (Overload.ts), then goes to the direct route of its exact method and URL,
 * if any (DirectRoutes.ts), else to the router; every request is counted, timed and access-logged
 * (RequestObserver.ts), its log lines carrying its request id and trace id (RequestLogContext.ts).
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Context, Effect, Layer, LogLevel, Option } from "effect"
import { HttpMiddleware, HttpRouter, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { AppConfig } from "../config/AppConfig.js"
import { addGaugeSampler, labels, record, runsConcurrencyLimit, runsInFlight, runsUsingProcess } from "../telemetry/Metrics.js"
import { requestLogContext } from "../telemetry/RequestLogContext.js"
import { Boundary, RouterSettings } from "../http/Boundary.js"
import { makeCors } from "../http/Cors.js"
import { errorBoundary } from "../http/ErrorBoundary.js"
import { acceptOn, announceListening, reservePort, sharedAddress } from "./SharedPort.js"
import { type OverloadGuard, startOverloadGuard } from "./Overload.js"
import { observeAnswer, observeRequests, withServerSpanNames } from "./RequestObserver.js"
import { nodeRequestOf } from "../http/RequestShape.js"
import { DirectRoutes, type DirectServer } from "./DirectRoutes.js"
import { makeRouteLabeler } from "../http/RouteLabels.js"
import { watchBodyDeadline } from "./BodyDeadline.js"
import { makeDrain } from "./Drain.js"
import { closeWaitingResponder } from "./SchemaGate.js"
import { Lifecycle } from "../health/Lifecycle.js"
import { createServer, type IncomingMessage, type Server } from "node:http"

export class ServerAddress extends Context.Service<
  ServerAddress,
  { readonly host: string; readonly port: number; readonly url: string }
>()("ServerAddress") {}

const NoLabels = labels({})

/** The guard's in-flight counts and limit as gauges, read before each scrape or push. */
const guardGauges = (guard: OverloadGuard) =>
  addGaugeSampler(() => {
    record(runsInFlight, guard.inFlight(), NoLabels)
    record(runsUsingProcess, guard.using(), NoLabels)
    record(runsConcurrencyLimit, guard.limit(), NoLabels)
  })

/**
 * The API's app (the router the API's routes and the pages beside it are registered on), inside the edge
 * (ErrorBoundary.ts) and observed: counted, timed and logged per request, with the request's log context. Beside it,
 * the app that answers what a direct route hands back (DirectRoutes.ts): the answer it was given, inside the same edge
 * and error encoding as the router's, observed alike.
 */
const observedApps = <E, R>(routeLayer: Layer.Layer<never, E, R>) =>
Effect.gen(function*() {
  const config = yield* AppConfig
  yield* requestLogContext
  const { table } = yield* Boundary
  const router = yield* HttpRouter.toHttpEffect(routeLayer).pipe(Effect.provideService(HttpRouter.RouterConfig, RouterSettings))
  const routes = makeRouteLabeler(table.routes)
  // Below LOG_LEVEL=info the access line would be dropped anyway: skip building it.
  const accessLog = config.accessLog && LogLevel.isGreaterThanOrEqualTo("Info", config.logLevel)
  const observe = observeRequests({ routes, accessLog })
  const edge = errorBoundary(table, makeCors(config.corsAllowedOrigins))
  const handedBack = new WeakMap<IncomingMessage, Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>>()
  const answerHandedBack = Effect.withFiber((fiber) => {
    const raw = nodeRequestOf(Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest))
    const answer = handedBack.get(raw)
    handedBack.delete(raw)
    return answer ?? Effect.die(new Error("a direct route handed back no answer"))
  })
  return {
    app: observe(edge(router)),
    handedBackApp: observe(edge(answerHandedBack)),
    handedBack,
    observeAnswer: observeAnswer(accessLog),
    accessLog,
    services: yield* Effect.context<never>()
  }
})

/** The API's handler, and the direct routes' handlers by `METHOD url` with the server's means to hand answers back. */
const requestHandlers = <E, R>(routeLayer: Layer.Layer<never, E, R>) =>
Effect.gen(function*() {
  const routes = Option.getOrElse(yield* Effect.serviceOption(DirectRoutes), () => [])
  const apps = yield* observedApps(routeLayer)
  const scope = yield* Effect.scope
  // Each request in a span of its own (`http.server GET`, continuing the caller's `traceparent`) while tracing is on.
  const handler = yield* withServerSpanNames(NodeHttpServer.makeHandler(apps.app, { scope, middleware: HttpMiddleware.tracer }))
  const handBack = yield* withServerSpanNames(NodeHttpServer.makeHandler(apps.handedBackApp, { scope, middleware: HttpMiddleware.tracer }))
  const server: DirectServer = {
    runtime: apps.services,
    observe: (method, route, status, durationMs) => {
      const line = apps.observeAnswer(method, route, status, durationMs)
      return apps.accessLog ? line : undefined
    },
    viaApi: (request, response, answer) => {
      apps.handedBack.set(request, answer)
      handBack(request, response)
    }
  }
  const direct = new Map(routes.map((route) => [`${route.method} ${route.url}`, route.make(server)]))
  return { handler, direct }
})

/**
 * How this process accepts (SharedPort.ts): under WORKERS, on the port the primary reserved, telling the primary once
 * it listens; alone, on the port it reserves once its app is built.
 */
const acceptFor = (options: { readonly host: string; readonly port: number }) => {
  const shared = sharedAddress()
  return shared !== undefined
    ? (server: Server) => acceptOn(server, shared).then((accepting) => (announceListening(), accepting))
    : (server: Server) => reservePort(options).then((address) => acceptOn(server, address))
}

/**
 * Builds the app of the routes `routeLayer` registers (on a router of its own, HttpRouter.toHttpEffect), then listens
 * on host and port (0 picks a free port).
 */
export const listen = <E, R>(options: { readonly host: string; readonly port: number }, routeLayer: Layer.Layer<never, E, R>) =>
  Layer.effect(
    ServerAddress,
    Effect.gen(function*() {
      const accept = acceptFor(options)
      const { handler, direct } = yield* requestHandlers(routeLayer)
      const config = yield* AppConfig
      const guard = yield* Effect.acquireRelease(
        Effect.sync(() => startOverloadGuard({
          maxLagMs: config.overloadMaxLagMs,
          maxInFlight: config.runsMaxInFlight,
          budgetMs: config.runsTimeBudgetMs,
          cors: makeCors(config.corsAllowedOrigins)
        })),
        (guard) => Effect.sync(guard.stop)
      )
      yield* guardGauges(guard)
      const server = createServer({ keepAliveTimeout: 65_000 }, (request, response) => {
        drain.track(request, response)
        watchBodyDeadline(request, response, config.requestBodyTimeoutMs)
        if (guard.shedOnceRead(request, response)) return
        const route = direct.size === 0 ? undefined : direct.get(`${request.method} ${request.url}`)
        if (route === undefined) handler(request, response)
        else route(request, response)
      })
      const drain = makeDrain({
        server,
        lifecycle: yield* Lifecycle,
        drainMs: config.shutdownDrainMs,
        timeoutMs: config.shutdownTimeoutMs
      })
      yield* closeWaitingResponder
      const accepting = yield* Effect.acquireRelease(
        Effect.tryPromise({ try: () => accept(server), catch: (error) => error as Error }),
        ({ stop }) => drain.stop(stop)
      )
      const { host, port } = accepting.address
      const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`
      yield* Effect.logInfo(`listening on ${url}`)
      return { host, port, url }
    })
  ).pipe(Layer.provide(NodeHttpServer.layerHttpServices))
