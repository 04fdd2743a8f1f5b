/**
 * Serves a built HttpApi on a Node HTTP server. The app and everything it needs (database, migrations) are built
 * first and the request handler is attached when the server is created, before it listens: a connection accepted
 * during start-up can never reach a server without a handler (the hang described in notes on NodeHttpServer.layer).
 * Each request's body must arrive within `REQUEST_BODY_TIMEOUT_MS` of its headers (BodyDeadline.ts). The overload
 * guard sees each request first (Overload.ts), and decides on a run or selection with a body once its reader has read
 * it; a request it lets through goes to the direct route of its exact method and URL, if any (DirectRoutes.ts), else
 * to the API's router. Every request is counted, timed and
 * access-logged (RequestObserver.ts), and every log line written while it is handled carries its request id and
 * trace id (RequestLogContext.ts).
 */
import { HttpApi, HttpApiBuilder, HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { NodeHttpServer, NodeHttpServerRequest } from "@effect/platform-node"
import { Chunk, Context, Effect, Layer, LogLevel, Option } from "effect"
import { AppConfig } from "../config/AppConfig.js"
import { addGaugeSampler, labels, runsConcurrencyLimit, runsInFlight, runsUsingProcess } from "../telemetry/Metrics.js"
import { requestLogContext } from "../telemetry/RequestLogContext.js"
import { makeCors } from "./Cors.js"
import { acceptOn, announceListening, reservePort, sharedAddress } from "./SharedPort.js"
import { type OverloadGuard, startOverloadGuard } from "./Overload.js"
import { observeAnswer, observeRequests } from "./RequestObserver.js"
import { DirectRoutes, type DirectServer } from "./DirectRoutes.js"
import { makeRouteLabeler } from "./RouteLabels.js"
import { watchBodyDeadline } from "./BodyDeadline.js"
import { createServer, type IncomingMessage, type Server } from "node:http"

/** Where the server listens. */
export class ServerAddress extends Context.Tag("ServerAddress")<
  ServerAddress,
  { readonly host: string; readonly port: number; readonly url: string }
>() {}

const NoLabels = labels({})

/** The guard's in-flight counts and limit as gauges, read before each scrape or push. */
const guardGauges = (guard: OverloadGuard) =>
  addGaugeSampler(() => {
    runsInFlight.unsafeUpdate(guard.inFlight(), NoLabels)
    runsUsingProcess.unsafeUpdate(guard.using(), NoLabels)
    runsConcurrencyLimit.unsafeUpdate(guard.limit(), NoLabels)
  })

/**
 * The API's app, observed: counted, timed and logged per request, with the request's log context. Beside it, the app
 * that answers what a direct route hands back (DirectRoutes.ts): the answer it was given, inside the same edge and
 * error encoding as the router's (HttpApiBuilder.httpApp composes the router with them the same way), observed alike.
 */
const observedApps = Effect.gen(function*() {
  const config = yield* AppConfig
  yield* requestLogContext
  const app = yield* HttpApiBuilder.httpApp
  const router = yield* HttpApiBuilder.Router.router
  const routes = makeRouteLabeler(Chunk.toReadonlyArray(router.routes))
  // Below LOG_LEVEL=info the access line would be dropped anyway: skip building it.
  const accessLog = config.accessLog && LogLevel.greaterThanEqual(LogLevel.Info, config.logLevel)
  const observe = observeRequests({ routes, accessLog })
  const { api } = yield* HttpApi.Api
  const encodeErrors = yield* HttpApiBuilder.buildMiddleware(api)
  const edge = yield* (yield* HttpApiBuilder.Middleware).retrieve
  const handedBack = new WeakMap<IncomingMessage, Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>>()
  const answerHandedBack = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const raw = NodeHttpServerRequest.toIncomingMessage(request)
    const answer = handedBack.get(raw)
    handedBack.delete(raw)
    return answer ?? Effect.die(new Error("a direct route handed back no answer"))
  })
  return {
    app: observe(app),
    // buildMiddleware's type leaves out the request it is always run with (as inside HttpApiBuilder.httpApp).
    handedBackApp: observe(
      encodeErrors(edge(answerHandedBack) as Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>) as typeof answerHandedBack
    ),
    handedBack,
    observeAnswer: observeAnswer(accessLog),
    accessLog,
    runtime: yield* Effect.runtime<never>()
  }
})

/** The API's handler, and the direct routes' handlers by `METHOD url` with the server's means to hand answers back. */
const requestHandlers = Effect.gen(function*() {
  const routes = Option.getOrElse(yield* Effect.serviceOption(DirectRoutes), () => [])
  const apps = yield* observedApps
  const handler = yield* NodeHttpServer.makeHandler(apps.app)
  const handBack = yield* NodeHttpServer.makeHandler(apps.handedBackApp)
  const server: DirectServer = {
    runtime: apps.runtime,
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

/** Builds the API's app, then listens on host and port (0 picks a free port). */
export const listen = (options: { readonly host: string; readonly port: number }) =>
  Layer.scoped(
    ServerAddress,
    Effect.gen(function*() {
      const accept = acceptFor(options)
      const { handler, direct } = yield* requestHandlers
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
        watchBodyDeadline(request, response, config.requestBodyTimeoutMs)
        if (guard.shedOnceRead(request, response)) return
        const route = direct.size === 0 ? undefined : direct.get(`${request.method} ${request.url}`)
        if (route === undefined) handler(request, response)
        else route(request, response)
      })
      const accepting = yield* Effect.acquireRelease(
        Effect.tryPromise({ try: () => accept(server), catch: (error) => error as Error }),
        ({ stop }) =>
          Effect.async<void>((resume) => {
            // The server's own close would wait only for the connections of its own copy.
            stop(() => resume(Effect.void))
            server.closeIdleConnections()
            const timer = setTimeout(() => server.closeAllConnections(), 5_000)
            timer.unref()
          })
      )
      const address = { address: accepting.address.host, port: accepting.address.port }
      const host = address.address.includes(":") ? `[${address.address}]` : address.address
      const url = `http://${host}:${address.port}`
      yield* Effect.logInfo(`listening on ${url}`)
      return { host: address.address, port: address.port, url }
    })
  ).pipe(
    Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer, NodeHttpServer.layerContext])
  )
