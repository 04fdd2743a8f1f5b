/**
 * The service, assembled: every group's handlers, the boundary, the OpenAPI document and docs page, the services
 * the handlers compose, the database and telemetry. The order matters: what the handlers need (the migrated
 * database) is built before the server listens.
 */
import { HttpApiBuilder, HttpApiScalar } from "@effect/platform"
import { Effect, Layer, Logger } from "effect"
import { Api } from "../schema/Api.js"
import { AppConfig } from "./AppConfig.js"
import { DatabaseLive } from "./db/Sql.js"
import { LedgersLive, VerifierLive } from "./Directory.js"
import { AuthenticationLive } from "./auth/Authenticate.js"
import { HealthHttp } from "./health/HealthHttp.js"
import { Keys } from "./keys/Keys.js"
import { KeysHttp } from "./keys/KeysHttp.js"
import { BootstrapLive } from "./organizations/Bootstrap.js"
import { Organizations } from "./organizations/Organizations.js"
import { AutoRecharge } from "./billing/AutoRecharge.js"
import { Billing } from "./billing/Billing.js"
import { BillingHttp } from "./billing/BillingHttp.js"
import { BillingPagePaths, BillingPagesLive } from "./billing/BillingPages.js"
import { BillingRepo } from "./billing/BillingRepo.js"
import { LocalSigningKey, PaymentProcessorLive } from "./billing/PaymentProcessorLive.js"
import { ModelProviderLive } from "./providers/ModelProviderLive.js"
import { ModelRouter } from "./router/ModelRouter.js"
import { RouterData } from "./router/RouterData.js"
import { RouterHttp } from "./router/RouterHttp.js"
import { RouterRepo } from "./router/RouterRepo.js"
import { CallRecorder } from "./ledger/CallRecorder.js"
import { LedgerHolder } from "./ledger/Holder.js"
import { QuotaLedger } from "./ledger/QuotaLedger.js"
import { AfterSettlement, RunLedger } from "./ledger/RunLedger.js"
import { SweeperLive } from "./ledger/Sweeper.js"
import { Runs } from "./runs/Runs.js"
import { RunsHttp } from "./runs/RunsHttp.js"
import { Usage } from "./usage/Usage.js"
import { UsageHttp } from "./usage/UsageHttp.js"
import { UsageRepo } from "./usage/UsageRepo.js"
import { Readiness } from "./health/Readiness.js"
import { boundaryLayer } from "./http/Boundary.js"
import { listen } from "./http/Listen.js"
import { TelemetryLive } from "./telemetry/Telemetry.js"

/** Every group's handlers, behind the boundary. */
export const HandlersLive = HttpApiBuilder.api(Api).pipe(
  Layer.provide([HealthHttp, KeysHttp, RunsHttp, RouterHttp, UsageHttp, BillingHttp]),
  Layer.provide(boundaryLayer(Api, BillingPagePaths)),
  Layer.provide(AuthenticationLive)
)

/** Auto-recharge after every settlement that leaves a balance under its threshold. */
const AfterSettlementLive = Layer.effect(AfterSettlement, Effect.map(AutoRecharge, (recharge) => recharge.afterSettlement))

const RunsLive = Runs.layer.pipe(
  Layer.provideMerge(Layer.mergeAll(RunLedger.layer, CallRecorder.layer)),
  Layer.provideMerge(Layer.mergeAll(LedgersLive, ModelProviderLive, LedgerHolder.layer))
)

const UsageLive = Usage.layer.pipe(Layer.provide(Layer.mergeAll(UsageRepo.layer, QuotaLedger.layer)))

const RouterLive = ModelRouter.layer.pipe(
  Layer.provide(Layer.mergeAll(RouterData.layer, RouterRepo.layer)),
  Layer.provide(RunsLive)
)

const BillingLive = Layer.mergeAll(Billing.layer, AutoRecharge.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(BillingRepo.layer, PaymentProcessorLive)),
  Layer.provideMerge(LocalSigningKey.layer),
  Layer.provide(LedgersLive)
)

/** The services the handlers compose (each needs the SQL client and the settings). */
export const ServicesLive = Organizations.layer.pipe(
  Layer.provideMerge(Layer.mergeAll(Readiness.layer, Keys.layer, RouterLive, UsageLive)),
  Layer.provideMerge(RunsLive),
  Layer.provideMerge(AfterSettlementLive),
  Layer.provideMerge(BillingLive),
  Layer.provideMerge(VerifierLive)
)

/**
 * The HTTP app listening on host and port, given the database; `bootstrap` runs the embedded first start. The
 * services stay visible to whoever builds it (tests seed data through them).
 */
export const HttpLive = (options: { readonly host: string; readonly port: number; readonly bootstrap: boolean }) =>
  listen(options).pipe(
    Layer.provide(HttpApiScalar.layer({ path: "/docs" })),
    Layer.provide(BillingPagesLive),
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" })),
    Layer.provide(HandlersLive),
    Layer.provide(options.bootstrap ? BootstrapLive : Layer.empty),
    Layer.provide(SweeperLive),
    Layer.provideMerge(ServicesLive)
  )

/** Log lines in the configured format, at the configured level. */
export const LoggingLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Layer.merge(
      config.logFormat === "json" ? Logger.json : config.logFormat === "pretty" ? Logger.pretty : Logger.logFmt,
      Logger.minimumLogLevel(config.logLevel)
    ))
)

/** The whole server as configured: database (migrated), telemetry and logging included. */
export const ServerLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) => HttpLive({ host: config.host, port: config.port, bootstrap: true }))
).pipe(
  Layer.provide(DatabaseLive),
  Layer.provide(TelemetryLive),
  Layer.provide(LoggingLive)
)
