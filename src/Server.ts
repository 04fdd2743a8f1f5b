/**
 * The service, assembled: every group's handlers, the boundary, the OpenAPI document and docs page, over the
 * services the handlers compose (Services.ts), the database and telemetry. The order matters: what the handlers
 * need (the migrated database) is built before the server listens, and every route is registered on the router
 * (Boundary.ts) before the server serves it.
 */
import { Cause, Effect, Exit, Layer, Logger, References } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../schema/Api.js"
import { AppConfig } from "./config/AppConfig.js"
import { DatabaseAsConfigured } from "./db/Sql.js"
import { AuthenticationLive } from "./auth/Authenticate.js"
import { HealthHttp } from "./health/HealthHttp.js"
import { KeysHttp } from "./keys/KeysHttp.js"
import { BootstrapLive } from "./organizations/Bootstrap.js"
import { BillingHttp } from "./billing/BillingHttp.js"
import { BillingPagePaths, BillingPagesLive } from "./billing/BillingPages.js"
import { RouterHttp } from "./router/RouterHttp.js"
import { SweeperLive } from "./ledger/Sweeper.js"
import { PlannerStatisticsLive } from "./db/PlannerStatistics.js"
import { ServicesLive } from "./Services.js"
import { RunsHttp } from "./runs/RunsHttp.js"
import { CreateRunRouteLive } from "./server/CreateRunRoute.js"
import type { DirectRoutes } from "./server/DirectRoutes.js"
import { UsageHttp } from "./usage/UsageHttp.js"
import { boundaryLayer } from "./http/Boundary.js"
import { docsLayer } from "./http/Docs.js"
import { listen } from "./server/Listen.js"
import { SchemaGate } from "./server/SchemaGate.js"
import { LifecycleLive } from "./health/Lifecycle.js"
import { MetricsLive } from "./telemetry/MetricsListener.js"
import { TelemetryLive } from "./telemetry/Telemetry.js"
import { consoleFlatJson } from "./telemetry/JsonLogger.js"

/** The boundary of the service's API: the route table, the request-shape middlewares and the router. */
export const BoundaryLive = boundaryLayer(Api, BillingPagePaths)

/** Every group's handlers (behind the boundary's middlewares, given by the server) and the OpenAPI document. */
export const HandlersLive = HttpApiBuilder.layer(Api, { openapiPath: "/openapi.json" }).pipe(
  Layer.provide([HealthHttp, KeysHttp, RunsHttp, RouterHttp, UsageHttp, BillingHttp]),
  Layer.provide(AuthenticationLive)
)

/**
 * Every route: the API's, the docs page and the local billing pages (registered on the server's router,
 * server/Listen.ts).
 */
export const RoutesLive = Layer.mergeAll(HandlersLive, docsLayer(Api, "/docs"), BillingPagesLive)

/**
 * The HTTP app listening on host and port, given the database; `bootstrap` runs the embedded first start. The
 * services stay visible to whoever builds it (tests seed data through them). `directRoutes` are the routes served
 * beside the router (src/server/DirectRoutes.ts): `POST /v1/runs` unless a test gives others (none, to compare).
 */
export const HttpLive = (options: {
  readonly host: string
  readonly port: number
  readonly bootstrap: boolean
  readonly directRoutes?: Layer.Layer<DirectRoutes, never, Layer.Services<typeof CreateRunRouteLive>>
}) =>
  Layer.merge(listen(options, RoutesLive), MetricsLive).pipe(
    Layer.provide(options.directRoutes ?? CreateRunRouteLive),
    Layer.provide(BoundaryLive),
    Layer.provide(options.bootstrap ? BootstrapLive : Layer.empty),
    Layer.provide(SweeperLive),
    Layer.provide(PlannerStatisticsLive),
    Layer.provideMerge(ServicesLive),
    // One lifecycle for the listener's drain, readiness and the ledger's settlement at stop.
    Layer.provideMerge(LifecycleLive)
  )

/** Log lines in the configured format (`json`: flat fields, JsonLogger.ts), at the configured level. */
export const LoggingLive = Layer.unwrap(
  Effect.map(AppConfig, (config) =>
    Layer.merge(
      Logger.layer([
        config.logFormat === "json" ? consoleFlatJson : config.logFormat === "pretty" ? Logger.consolePretty() : Logger.consoleLogFmt
      ]),
      Layer.succeed(References.MinimumLogLevel, config.logLevel)
    ))
)

/** The last line of a server stopped by SIGTERM or SIGINT, once everything else has closed. */
const StoppedLog = Layer.effectDiscard(
  Effect.addFinalizer((exit) =>
    Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? Effect.logInfo("shutdown: stopped") : Effect.void
  )
)

/**
 * The whole server as configured: database (migrated unless `MIGRATIONS=off`; then, until the schema is current, the
 * schema gate answers in its place, server/SchemaGate.ts), telemetry and logging included.
 */
export const ServerLive = Layer.unwrap(
  Effect.map(AppConfig, (config) => HttpLive({ host: config.host, port: config.port, bootstrap: true }))
).pipe(
  Layer.provide(SchemaGate),
  Layer.provide(DatabaseAsConfigured),
  Layer.provide(StoppedLog),
  Layer.provide(TelemetryLive),
  Layer.provide(LoggingLive)
)
