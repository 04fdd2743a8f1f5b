/**
 * Every setting of the service, read once from the environment with effect/Config. README.md lists each with its
 * default and meaning; keep the two in step.
 */
import { Array as Arr, Config, ConfigError, Context, Effect, Either, Layer, LogLevel, Option, Order, type Redacted } from "effect"
import { shippedFile } from "./ProjectRoot.js"

/** The service's settings. */
export interface Settings {
  readonly host: string
  readonly port: number
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  readonly dataDir: string
  readonly databasePoolSize: number
  readonly overloadMaxLagMs: number
  readonly runsMaxInFlight: number
  /** The own time per run the adaptive limit keeps runs within, in ms (`RUNS_TIME_BUDGET_MS`). */
  readonly runsTimeBudgetMs: number
  /** How long a request's body may take to arrive after its headers, in ms (`REQUEST_BODY_TIMEOUT_MS`). */
  readonly requestBodyTimeoutMs: number
  readonly ledgerLeaseTtlSeconds: number
  readonly corsAllowedOrigins: ReadonlyArray<string>
  readonly otlpEndpoint: Option.Option<string>
  readonly serviceName: string
  /** How often metrics are pushed over OTLP, in ms (`OTEL_METRIC_EXPORT_INTERVAL`). */
  readonly otlpMetricsIntervalMs: number
  /** The port of the Prometheus scrape listener; none keeps it off (`METRICS_PORT`). */
  readonly metricsPort: Option.Option<number>
  readonly metricsHost: string
  /** One info line per request (`ACCESS_LOG`). */
  readonly accessLog: boolean
  readonly logLevel: LogLevel.LogLevel
  readonly logFormat: "logfmt" | "json" | "pretty"
  readonly consoleJwksUrl: Option.Option<string>
  readonly consoleJwksFile: Option.Option<string>
  readonly consoleJwtIssuer: Option.Option<string>
  readonly consoleJwtAudience: Option.Option<string>
  readonly decisionProvider: "local" | "openai"
  readonly decisionProviderUrl: Option.Option<string>
  readonly decisionProviderApiKey: Option.Option<Redacted.Redacted>
  readonly decisionProviderModel: Option.Option<string>
  readonly decisionProviderMaxRetries: number
  readonly decisionProviderRetryBaseMs: number
  readonly decisionProviderAttemptTimeoutMs: number
  readonly decisionModelId: string
  readonly decisionModelAlias: string
  readonly decisionPricePerMtokMicros: number
  readonly routerCatalogPath: string
  readonly routerTaskTypesPath: string
  readonly billingProvider: "local" | "stripe"
  /** `BILLING_PROVIDER` was set (rather than defaulting to `local`): required to run the local processor on PostgreSQL. */
  readonly billingProviderChosen: boolean
  readonly publicBaseUrl: Option.Option<string>
  readonly stripeSecretKey: Option.Option<Redacted.Redacted>
  readonly stripeWebhookSecret: Option.Option<Redacted.Redacted>
  readonly stripeApiUrl: Option.Option<string>
  readonly localBillingSigningKey: Option.Option<Redacted.Redacted>
}

/** A data file shipped with the service (`data/`), wherever the service is installed. */
const shippedData = (file: string) => shippedFile("data", file)

/**
 * The log levels by name, least to most severe: `all`, `trace`, `debug`, `info`, `warn`, `error`, `fatal`, `off`
 * (Effect's level labels). `LOG_LEVEL` and the operator CLI's `--log-level` both take exactly these, in any case.
 */
export const logLevelNames: ReadonlyArray<string> = Arr.sort(
  LogLevel.allLevels,
  Order.mapInput(Order.number, (level: LogLevel.LogLevel) => level.ordinal)
).map((level) => level.label.toLowerCase())

/** The log level of a name of `logLevelNames` (any case); none for any other text. */
export const logLevelNamed = (name: string): Option.Option<LogLevel.LogLevel> =>
  Arr.findFirst(LogLevel.allLevels, (level) => level.label === name.toUpperCase())

const logLevelSetting = (name: string) =>
  Config.string().pipe(
    Config.mapOrFail((value) =>
      Either.fromOption(
        logLevelNamed(value),
        () => ConfigError.InvalidData([], `${name} must be one of ${logLevelNames.join(", ")}, not ${JSON.stringify(value)}`)
      )
    ),
    Config.nested(name)
  )

const commaList = (name: string) =>
  Config.string(name).pipe(
    Config.withDefault(""),
    Config.map((value) => value.split(",").map((item) => item.trim()).filter((item) => item !== ""))
  )

const hostConfig = Config.string("HOST").pipe(Config.withDefault("127.0.0.1"))
const portConfig = Config.port("PORT").pipe(Config.withDefault(8080))

/** Where the API listens (`HOST`, `PORT`): also read by the primary of `WORKERS` processes, which binds it for them. */
export const ListenAddressConfig = Config.all({ host: hostConfig, port: portConfig })

/** The Config description of every setting, with its default. */
export const SettingsConfig: Config.Config<Settings> = Config.all({
  host: hostConfig,
  port: portConfig,
  databaseUrl: Config.option(Config.redacted("DATABASE_URL")),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault("./.data")),
  databasePoolSize: Config.integer("DATABASE_POOL_SIZE").pipe(
    Config.withDefault(10),
    Config.validate({ message: "DATABASE_POOL_SIZE must be between 1 and 100", validation: (n) => n >= 1 && n <= 100 })
  ),
  corsAllowedOrigins: commaList("CORS_ALLOWED_ORIGINS"),
  ledgerLeaseTtlSeconds: Config.integer("LEDGER_LEASE_TTL_SECONDS").pipe(
    Config.withDefault(15),
    Config.validate({ message: "LEDGER_LEASE_TTL_SECONDS must be 2 to 300", validation: (n) => n >= 2 && n <= 300 })
  ),
  overloadMaxLagMs: Config.integer("OVERLOAD_MAX_LAG_MS").pipe(
    Config.withDefault(250),
    Config.validate({ message: "OVERLOAD_MAX_LAG_MS must be 0 (off) to 10000", validation: (n) => n >= 0 && n <= 10_000 })
  ),
  runsMaxInFlight: Config.integer("RUNS_MAX_IN_FLIGHT").pipe(
    Config.withDefault(1_024),
    Config.validate({ message: "RUNS_MAX_IN_FLIGHT must be 0 (no limit) to 1000000", validation: (n) => n >= 0 && n <= 1_000_000 })
  ),
  runsTimeBudgetMs: Config.integer("RUNS_TIME_BUDGET_MS").pipe(
    Config.withDefault(500),
    Config.validate({ message: "RUNS_TIME_BUDGET_MS must be 10 to 60000", validation: (n) => n >= 10 && n <= 60_000 })
  ),
  requestBodyTimeoutMs: Config.integer("REQUEST_BODY_TIMEOUT_MS").pipe(
    Config.withDefault(10_000),
    Config.validate({
      message: "REQUEST_BODY_TIMEOUT_MS must be 100 to 300000 (ms)",
      validation: (n) => n >= 100 && n <= 300_000
    })
  ),
  otlpEndpoint: Config.option(Config.string("OTEL_EXPORTER_OTLP_ENDPOINT")),
  serviceName: Config.string("OTEL_SERVICE_NAME").pipe(Config.withDefault("arbiter")),
  otlpMetricsIntervalMs: Config.integer("OTEL_METRIC_EXPORT_INTERVAL").pipe(
    Config.withDefault(60_000),
    Config.validate({
      message: "OTEL_METRIC_EXPORT_INTERVAL must be 100 to 3600000 (ms)",
      validation: (n) => n >= 100 && n <= 3_600_000
    })
  ),
  metricsPort: Config.option(Config.port("METRICS_PORT")),
  metricsHost: Config.string("METRICS_HOST").pipe(Config.withDefault("127.0.0.1")),
  accessLog: Config.boolean("ACCESS_LOG").pipe(Config.withDefault(true)),
  logLevel: logLevelSetting("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info)),
  logFormat: Config.literal("logfmt", "json", "pretty")("LOG_FORMAT").pipe(Config.withDefault("logfmt" as const)),
  consoleJwksUrl: Config.option(Config.string("CONSOLE_JWKS_URL")),
  consoleJwksFile: Config.option(Config.string("CONSOLE_JWKS_FILE")),
  consoleJwtIssuer: Config.option(Config.string("CONSOLE_JWT_ISSUER")),
  consoleJwtAudience: Config.option(Config.string("CONSOLE_JWT_AUDIENCE")),
  decisionProvider: Config.literal("local", "openai")("DECISION_PROVIDER").pipe(Config.withDefault("local" as const)),
  decisionProviderUrl: Config.option(Config.string("DECISION_PROVIDER_URL")),
  decisionProviderApiKey: Config.option(Config.redacted("DECISION_PROVIDER_API_KEY")),
  decisionProviderModel: Config.option(Config.string("DECISION_PROVIDER_MODEL")),
  decisionProviderMaxRetries: Config.integer("DECISION_PROVIDER_MAX_RETRIES").pipe(
    Config.withDefault(4),
    Config.validate({ message: "DECISION_PROVIDER_MAX_RETRIES must be 0 to 10", validation: (n) => n >= 0 && n <= 10 })
  ),
  decisionProviderRetryBaseMs: Config.integer("DECISION_PROVIDER_RETRY_BASE_MS").pipe(
    Config.withDefault(250),
    Config.validate({ message: "DECISION_PROVIDER_RETRY_BASE_MS must be 1 to 10000", validation: (n) => n >= 1 && n <= 10_000 })
  ),
  decisionProviderAttemptTimeoutMs: Config.integer("DECISION_PROVIDER_ATTEMPT_TIMEOUT_MS").pipe(
    Config.withDefault(120_000),
    Config.validate({ message: "DECISION_PROVIDER_ATTEMPT_TIMEOUT_MS must be 100 to 150000", validation: (n) => n >= 100 && n <= 150_000 })
  ),
  decisionModelId: Config.string("DECISION_MODEL_ID").pipe(Config.withDefault("decision-1")),
  decisionModelAlias: Config.string("DECISION_MODEL_ALIAS").pipe(Config.withDefault("decision-latest")),
  decisionPricePerMtokMicros: Config.integer("DECISION_PRICE_PER_MTOK_MICROS").pipe(
    Config.withDefault(42_000),
    Config.validate({ message: "DECISION_PRICE_PER_MTOK_MICROS must be a whole number >= 0", validation: (n) => n >= 0 })
  ),
  routerCatalogPath: Config.string("ROUTER_CATALOG_PATH").pipe(Config.withDefault(shippedData("catalog.json"))),
  routerTaskTypesPath: Config.string("ROUTER_TASK_TYPES_PATH").pipe(Config.withDefault(shippedData("task-types.json"))),
  billingProvider: Config.literal("local", "stripe")("BILLING_PROVIDER").pipe(Config.withDefault("local" as const)),
  billingProviderChosen: Config.option(Config.string("BILLING_PROVIDER")).pipe(Config.map(Option.isSome)),
  publicBaseUrl: Config.option(Config.string("PUBLIC_BASE_URL")),
  stripeSecretKey: Config.option(Config.redacted("STRIPE_SECRET_KEY")),
  stripeWebhookSecret: Config.option(Config.redacted("STRIPE_WEBHOOK_SECRET")),
  stripeApiUrl: Config.option(Config.string("STRIPE_API_URL")),
  localBillingSigningKey: Config.option(Config.redacted("LOCAL_BILLING_SIGNING_KEY"))
}).pipe(
  Config.validate({
    message: "BILLING_PROVIDER=stripe needs STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET",
    validation: (settings) =>
      settings.billingProvider === "local" ||
      (Option.isSome(settings.stripeSecretKey) && Option.isSome(settings.stripeWebhookSecret))
  }),
  Config.validate({
    message: "DECISION_PROVIDER=openai needs DECISION_PROVIDER_URL (up to and including /v1) and DECISION_PROVIDER_MODEL",
    validation: (settings) =>
      settings.decisionProvider === "local" ||
      (Option.isSome(settings.decisionProviderUrl) && Option.isSome(settings.decisionProviderModel))
  }),
  Config.validate({
    message: "console sessions need CONSOLE_JWT_ISSUER and CONSOLE_JWT_AUDIENCE besides CONSOLE_JWKS_URL or CONSOLE_JWKS_FILE",
    validation: (settings) =>
      (Option.isNone(settings.consoleJwksUrl) && Option.isNone(settings.consoleJwksFile)) ||
      (Option.isSome(settings.consoleJwtIssuer) && Option.isSome(settings.consoleJwtAudience))
  })
)

/** The settings, as a service. */
export class AppConfig extends Context.Tag("AppConfig")<AppConfig, Settings>() {
  /** Settings read from the environment (or whatever ConfigProvider is current). */
  static readonly layer = Layer.effect(AppConfig, SettingsConfig)

  /** The root under which the service's own pages live (`PUBLIC_BASE_URL`, default `http://HOST:PORT`). */
  static readonly publicBaseUrl = (settings: Settings): string =>
    Option.getOrElse(settings.publicBaseUrl, () => `http://${settings.host}:${settings.port}`).replace(/\/+$/, "")

  /** Settings from the environment with some values replaced, for tests and tools. */
  static readonly layerWith = (overrides: Partial<Settings>) =>
    Layer.effect(AppConfig, Effect.map(SettingsConfig, (settings) => ({ ...settings, ...overrides })))
}
