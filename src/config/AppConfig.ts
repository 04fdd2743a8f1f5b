/**
 * Every setting of the service, read once from the environment with effect/Config. README.md lists each with its
 * default and meaning; keep the two in step.
 */
import { Config, Context, Effect, Layer, type LogLevel, Option, type Redacted, Schema, SchemaIssue } from "effect"
import { shippedFile } from "./ProjectRoot.js"

/** The service's settings. */
export interface Settings {
  readonly host: string
  readonly port: number
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  readonly dataDir: string
  /** Connections to PostgreSQL one process opens at most (`DATABASE_POOL_SIZE`). */
  readonly databasePoolSize: number
  /** `transaction`: `DATABASE_URL` reaches PostgreSQL through a pooler in transaction mode (`DATABASE_POOLER`). */
  readonly databasePooler: "none" | "transaction"
  /** `organization`: no ledger batch holds two organizations' runs (`LEDGER_BATCHES`; docs/scaling.md). */
  readonly ledgerBatches: "mixed" | "organization"
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

/** Each log level by its name, least to most severe (`off` is Effect's `None`). */
const levelsByName: ReadonlyMap<string, LogLevel.LogLevel> = new Map<string, LogLevel.LogLevel>([
  ["all", "All"],
  ["trace", "Trace"],
  ["debug", "Debug"],
  ["info", "Info"],
  ["warn", "Warn"],
  ["error", "Error"],
  ["fatal", "Fatal"],
  ["off", "None"]
])

/**
 * The log levels by name, least to most severe: `all`, `trace`, `debug`, `info`, `warn`, `error`, `fatal`, `off`.
 * `LOG_LEVEL` and the operator CLI's `--log-level` both take exactly these, in any case.
 */
export const logLevelNames: ReadonlyArray<string> = [...levelsByName.keys()]

/** The log level of a name of `logLevelNames` (any case); none for any other text. */
export const logLevelNamed = (name: string): Option.Option<LogLevel.LogLevel> =>
  Option.fromUndefinedOr(levelsByName.get(name.toLowerCase()))

/** A setting's value refused with `message` (reported as the setting's error). */
const invalid = (value: unknown, message: string) =>
  Effect.fail(new Config.ConfigError(new Schema.SchemaError(new SchemaIssue.InvalidValue({ message }, value))))

/** `config` checked by `validation`, refused with `message` when it does not hold. */
const validate = <A>(options: { readonly message: string; readonly validation: (value: A) => boolean }) =>
(config: Config.Config<A>): Config.Config<A> =>
  Config.mapEffect(config, (value) => options.validation(value) ? Effect.succeed(value) : invalid(value, options.message))

const logLevelSetting = (name: string) =>
  Config.mapEffect(Config.String(name), (value) =>
    Option.match(logLevelNamed(value), {
      onNone: () => invalid(value, `${name} must be one of ${logLevelNames.join(", ")}, not ${JSON.stringify(value)}`),
      onSome: Effect.succeed
    }))

const commaList = (name: string) =>
  Config.String(name).pipe(
    Config.withDefault(""),
    Config.map((value) => value.split(",").map((item) => item.trim()).filter((item) => item !== ""))
  )

const hostConfig = Config.String("HOST").pipe(Config.withDefault("127.0.0.1"))
const portConfig = Config.Port("PORT").pipe(Config.withDefault(8080))

/** Where the API listens (`HOST`, `PORT`): also read by the primary of `WORKERS` processes, which binds it for them. */
export const ListenAddressConfig = Config.all({ host: hostConfig, port: portConfig })

/** The Config description of every setting, with its default. */
export const SettingsConfig: Config.Config<Settings> = Config.all({
  host: hostConfig,
  port: portConfig,
  databaseUrl: Config.option(Config.Redacted("DATABASE_URL")),
  dataDir: Config.String("DATA_DIR").pipe(Config.withDefault("./.data")),
  databasePoolSize: Config.Int("DATABASE_POOL_SIZE").pipe(
    Config.withDefault(10),
    validate({
      message: "DATABASE_POOL_SIZE must be 2 to 100 (connections per process: one holds the migration lock while another migrates)",
      validation: (n) => n >= 2 && n <= 100
    })
  ),
  databasePooler: Config.Literals(["none", "transaction"], "DATABASE_POOLER").pipe(Config.withDefault("none" as const)),
  ledgerBatches: Config.Literals(["mixed", "organization"], "LEDGER_BATCHES").pipe(Config.withDefault("mixed" as const)),
  corsAllowedOrigins: commaList("CORS_ALLOWED_ORIGINS"),
  ledgerLeaseTtlSeconds: Config.Int("LEDGER_LEASE_TTL_SECONDS").pipe(
    Config.withDefault(15),
    validate({ message: "LEDGER_LEASE_TTL_SECONDS must be 2 to 300", validation: (n) => n >= 2 && n <= 300 })
  ),
  overloadMaxLagMs: Config.Int("OVERLOAD_MAX_LAG_MS").pipe(
    Config.withDefault(250),
    validate({ message: "OVERLOAD_MAX_LAG_MS must be 0 (off) to 10000", validation: (n) => n >= 0 && n <= 10_000 })
  ),
  runsMaxInFlight: Config.Int("RUNS_MAX_IN_FLIGHT").pipe(
    Config.withDefault(1_024),
    validate({ message: "RUNS_MAX_IN_FLIGHT must be 0 (no limit) to 1000000", validation: (n) => n >= 0 && n <= 1_000_000 })
  ),
  runsTimeBudgetMs: Config.Int("RUNS_TIME_BUDGET_MS").pipe(
    Config.withDefault(500),
    validate({ message: "RUNS_TIME_BUDGET_MS must be 10 to 60000", validation: (n) => n >= 10 && n <= 60_000 })
  ),
  requestBodyTimeoutMs: Config.Int("REQUEST_BODY_TIMEOUT_MS").pipe(
    Config.withDefault(10_000),
    validate({
      message: "REQUEST_BODY_TIMEOUT_MS must be 100 to 300000 (ms)",
      validation: (n) => n >= 100 && n <= 300_000
    })
  ),
  otlpEndpoint: Config.option(Config.String("OTEL_EXPORTER_OTLP_ENDPOINT")),
  serviceName: Config.String("OTEL_SERVICE_NAME").pipe(Config.withDefault("arbiter")),
  otlpMetricsIntervalMs: Config.Int("OTEL_METRIC_EXPORT_INTERVAL").pipe(
    Config.withDefault(60_000),
    validate({
      message: "OTEL_METRIC_EXPORT_INTERVAL must be 100 to 3600000 (ms)",
      validation: (n) => n >= 100 && n <= 3_600_000
    })
  ),
  metricsPort: Config.option(Config.Port("METRICS_PORT")),
  metricsHost: Config.String("METRICS_HOST").pipe(Config.withDefault("127.0.0.1")),
  accessLog: Config.Boolean("ACCESS_LOG").pipe(Config.withDefault(true)),
  logLevel: logLevelSetting("LOG_LEVEL").pipe(Config.withDefault("Info" as const)),
  logFormat: Config.Literals(["logfmt", "json", "pretty"], "LOG_FORMAT").pipe(Config.withDefault("logfmt" as const)),
  consoleJwksUrl: Config.option(Config.String("CONSOLE_JWKS_URL")),
  consoleJwksFile: Config.option(Config.String("CONSOLE_JWKS_FILE")),
  consoleJwtIssuer: Config.option(Config.String("CONSOLE_JWT_ISSUER")),
  consoleJwtAudience: Config.option(Config.String("CONSOLE_JWT_AUDIENCE")),
  decisionProvider: Config.Literals(["local", "openai"], "DECISION_PROVIDER").pipe(Config.withDefault("local" as const)),
  decisionProviderUrl: Config.option(Config.String("DECISION_PROVIDER_URL")),
  decisionProviderApiKey: Config.option(Config.Redacted("DECISION_PROVIDER_API_KEY")),
  decisionProviderModel: Config.option(Config.String("DECISION_PROVIDER_MODEL")),
  decisionProviderMaxRetries: Config.Int("DECISION_PROVIDER_MAX_RETRIES").pipe(
    Config.withDefault(4),
    validate({ message: "DECISION_PROVIDER_MAX_RETRIES must be 0 to 10", validation: (n) => n >= 0 && n <= 10 })
  ),
  decisionProviderRetryBaseMs: Config.Int("DECISION_PROVIDER_RETRY_BASE_MS").pipe(
    Config.withDefault(250),
    validate({ message: "DECISION_PROVIDER_RETRY_BASE_MS must be 1 to 10000", validation: (n) => n >= 1 && n <= 10_000 })
  ),
  decisionProviderAttemptTimeoutMs: Config.Int("DECISION_PROVIDER_ATTEMPT_TIMEOUT_MS").pipe(
    Config.withDefault(120_000),
    validate({ message: "DECISION_PROVIDER_ATTEMPT_TIMEOUT_MS must be 100 to 150000", validation: (n) => n >= 100 && n <= 150_000 })
  ),
  decisionModelId: Config.String("DECISION_MODEL_ID").pipe(Config.withDefault("decision-1")),
  decisionModelAlias: Config.String("DECISION_MODEL_ALIAS").pipe(Config.withDefault("decision-latest")),
  decisionPricePerMtokMicros: Config.Int("DECISION_PRICE_PER_MTOK_MICROS").pipe(
    Config.withDefault(42_000),
    validate({ message: "DECISION_PRICE_PER_MTOK_MICROS must be a whole number >= 0", validation: (n) => n >= 0 })
  ),
  routerCatalogPath: Config.String("ROUTER_CATALOG_PATH").pipe(Config.withDefault(shippedData("catalog.json"))),
  routerTaskTypesPath: Config.String("ROUTER_TASK_TYPES_PATH").pipe(Config.withDefault(shippedData("task-types.json"))),
  billingProvider: Config.Literals(["local", "stripe"], "BILLING_PROVIDER").pipe(Config.withDefault("local" as const)),
  billingProviderChosen: Config.option(Config.String("BILLING_PROVIDER")).pipe(Config.map(Option.isSome)),
  publicBaseUrl: Config.option(Config.String("PUBLIC_BASE_URL")),
  stripeSecretKey: Config.option(Config.Redacted("STRIPE_SECRET_KEY")),
  stripeWebhookSecret: Config.option(Config.Redacted("STRIPE_WEBHOOK_SECRET")),
  stripeApiUrl: Config.option(Config.String("STRIPE_API_URL")),
  localBillingSigningKey: Config.option(Config.Redacted("LOCAL_BILLING_SIGNING_KEY"))
}).pipe(
  validate({
    message: "BILLING_PROVIDER=stripe needs STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET",
    validation: (settings) =>
      settings.billingProvider === "local" ||
      (Option.isSome(settings.stripeSecretKey) && Option.isSome(settings.stripeWebhookSecret))
  }),
  validate({
    message: "DECISION_PROVIDER=openai needs DECISION_PROVIDER_URL (up to and including /v1) and DECISION_PROVIDER_MODEL",
    validation: (settings) =>
      settings.decisionProvider === "local" ||
      (Option.isSome(settings.decisionProviderUrl) && Option.isSome(settings.decisionProviderModel))
  }),
  validate({
    message: "console sessions need CONSOLE_JWT_ISSUER and CONSOLE_JWT_AUDIENCE besides CONSOLE_JWKS_URL or CONSOLE_JWKS_FILE",
    validation: (settings) =>
      (Option.isNone(settings.consoleJwksUrl) && Option.isNone(settings.consoleJwksFile)) ||
      (Option.isSome(settings.consoleJwtIssuer) && Option.isSome(settings.consoleJwtAudience))
  })
)

/** The settings, as a service. */
export class AppConfig extends Context.Service<AppConfig, Settings>()("AppConfig") {
  /** Settings read from the environment (or whatever ConfigProvider is current). */
  static readonly layer = Layer.effect(AppConfig, SettingsConfig)

  /** The root under which the service's own pages live (`PUBLIC_BASE_URL`, default `http://HOST:PORT`). */
  static readonly publicBaseUrl = (settings: Settings): string =>
    Option.getOrElse(settings.publicBaseUrl, () => `http://${settings.host}:${settings.port}`).replace(/\/+$/, "")

  /** Settings from the environment with some values replaced, for tests and tools. */
  static readonly layerWith = (overrides: Partial<Settings>) =>
    Layer.effect(AppConfig, Effect.map(SettingsConfig, (settings) => ({ ...settings, ...overrides })))
}
