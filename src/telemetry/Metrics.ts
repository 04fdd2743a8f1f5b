/**
 * The service's metrics, as Effect `Metric`s in the process-wide registry: the Prometheus listener renders them
 * (Prometheus.ts) and the OTLP exporter pushes them (Telemetry.ts), so both always show the same series. Updates
 * on the request path go through `LabelSets`: the labels of each series are built once and reused, and the series'
 * metric (the family's, with those labels as its attributes) is made once and kept, so a request costs a few map
 * lookups and counter additions.
 * Gauges that describe state owned elsewhere (database pools, the overload guard) are read by samplers registered
 * here, run just before each scrape or push.
 */
import { Context, Effect, Metric } from "effect"

/** Buckets of the request latency histogram, in seconds. */
export const RequestSecondsBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]

/** Buckets of the upstream call latency histogram, in seconds. */
export const UpstreamSecondsBuckets = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]

/** A series' labels, built once (the attributes of the series' metric). */
export type Labels = Metric.Metric.AttributeSet

/**
 * A metric family. Each of its series is a metric of its own, made on first use with the series' labels as its
 * attributes and kept: an update then finds its registry entry by a key the metric computed once, where a family
 * metric given its labels at each update (`Metric.withAttributes`) builds a context and a key every time.
 */
export class Family<State = unknown> {
  private readonly series = new WeakMap<Labels, Metric.Metric<number, State>>()
  constructor(private readonly make: (attributes: Labels) => Metric.Metric<number, State>) {}

  /** The metric of the series with these labels (pass the same `Labels` object every time: `labels`, `LabelSets`). */
  of(labels: Labels): Metric.Metric<number, State> {
    let found = this.series.get(labels)
    if (found === undefined) {
      found = this.make(labels)
      this.series.set(labels, found)
    }
    return found
  }
}

/** A family of counters that only grow. */
export const counter = (name: string, description?: string) =>
  new Family((attributes) => Metric.counter(name, { description, incremental: true, attributes }))

/** A family of histograms with these bucket boundaries. */
export const histogram = (name: string, description: string | undefined, buckets: ReadonlyArray<number>) => {
  const boundaries = Metric.boundariesFromIterable(buckets)
  return new Family((attributes) => Metric.histogram(name, { boundaries, description, attributes }))
}

/** A family of gauges. */
export const gauge = (name: string, description?: string) =>
  new Family((attributes) => Metric.gauge(name, { description, attributes }))

/** Requests answered by the HTTP app, by `method`, `route` (the route's template) and `status`. */
export const httpRequests = counter("arbiter_http_requests_total", "HTTP requests answered, by method, route and status")

/** Time from a request reaching the app to its response, by `method`, `route` and `status`. */
export const httpRequestSeconds = histogram(
  "arbiter_http_request_duration_seconds",
  "HTTP request latency in seconds, by method, route and status",
  RequestSecondsBuckets
)

/** Run requests (`POST /v1/runs`, `POST /v1/router/select`) by `route`, `outcome` and wire `code`. */
export const runs = counter(
  "arbiter_runs_total",
  "Run requests by route, outcome (completed, replayed, refused, rejected, failed, error, shed) and error code"
)

/** Credit and quota admission of new runs, by `route`, `result` (admitted, refused) and the refusal's `code`. */
export const creditAdmissions = counter(
  "arbiter_credit_admissions_total",
  "New runs admitted against credit and quota, or refused (402/429), by route, result and code"
)

/** Requests shed by the overload guard before any work, by `route` and `reason` (lag, limit). */
export const shedRequests = counter("arbiter_http_shed_total", "Requests shed by the overload guard, by route and reason")

/** Upstream model attempts by `provider`, `model`, `purpose` and `outcome`. */
export const upstreamCalls = counter(
  "arbiter_upstream_calls_total",
  "Upstream model attempts by provider, model, purpose and outcome"
)

/** Latency of upstream model attempts by `provider`, `model`, `purpose` and `outcome`. */
export const upstreamCallSeconds = histogram(
  "arbiter_upstream_call_duration_seconds",
  "Upstream model attempt latency in seconds, by provider, model, purpose and outcome",
  UpstreamSecondsBuckets
)

/** Waits before a retried upstream attempt, by `provider` and `reason` (backoff, retry_after). */
export const upstreamRetries = counter(
  "arbiter_upstream_retries_total",
  "Upstream attempts retried, by provider and what set the wait (backoff, retry_after)"
)

/** Open connections of each database pool (`pool`: main, async_commit). */
export const dbPoolConnections = gauge("arbiter_db_pool_connections", "Open connections of a database pool")
/** Idle connections of each database pool. */
export const dbPoolIdle = gauge("arbiter_db_pool_idle_connections", "Idle connections of a database pool")
/** Queries waiting for a connection of each database pool. */
export const dbPoolWaiting = gauge(
  "arbiter_db_pool_waiting_clients",
  "Clients waiting for a connection of a database pool"
)

/** Run requests being served, and the overload guard's adaptive limit on those using the process. */
export const runsInFlight = gauge("arbiter_runs_in_flight", "Run requests being served")
export const runsConcurrencyLimit = gauge(
  "arbiter_runs_concurrency_limit",
  "The overload guard's adaptive limit on run requests using the process at once"
)
/** Of the run requests being served, those using the process (not waiting on the upstream model). */
export const runsUsingProcess = gauge(
  "arbiter_runs_using_process",
  "Run requests being served and not waiting on the upstream model (what the adaptive limit holds)"
)

/** Runs whose settlement is queued, under way or waiting to be retried in this process (their answers wait too). */
export const ledgerSettlementsWaiting = gauge(
  "arbiter_ledger_settlements_waiting",
  "Runs whose settlement is queued, under way or waiting to be retried in this process"
)

/** Settlement batches retried because the database did not answer (the calls are billed once it does). */
export const ledgerSettlementRetries = counter(
  "arbiter_ledger_settlement_retries_total",
  "Settlement batches retried because the database did not answer"
)

/**
 * Runs whose end PostgreSQL refused to store, by `result`: `degraded` (stored failed without its output, its calls
 * billed) or `unsettled` (refused even so: its calls are not billed; the error log names the run).
 */
export const ledgerRefusedSettlements = counter(
  "arbiter_ledger_settlements_refused_total",
  "Runs whose end PostgreSQL refused to store, by result (degraded: stored failed and billed; unsettled: not billed)"
)

/** Labels from name/value pairs. */
export const labels = (pairs: Readonly<Record<string, string>>): Labels => Object.freeze({ ...pairs })

/**
 * Labels by a caller's key, built on first use and kept: the series of one metric family are few (routes x
 * statuses, outcomes x codes), and the same labels must be passed on every update for the series' metric to be
 * found (`seriesOf`) without building it again.
 */
export class LabelSets {
  private readonly sets = new Map<string, Labels>()
  constructor(private readonly build: (key: string) => Labels) {}

  get(key: string): Labels {
    let found = this.sets.get(key)
    if (found === undefined) {
      found = this.build(key)
      this.sets.set(key, found)
    }
    return found
  }
}

/**
 * The context metrics are updated in outside the runtime: none of its own, so every update lands in the
 * process-wide registry (`Metric.MetricRegistry`'s default), the one the Prometheus listener and the OTLP exporter
 * read.
 */
const registryContext: Context.Context<never> = Context.empty()

/** Adds one to a counter's series (synchronously: for code below the Effect runtime, and the hot path). */
export const count = (family: Family, series: Labels): void => family.of(series).updateUnsafe(1, registryContext)

/** Records a value in a histogram's or gauge's series. */
export const record = (family: Family, value: number, series: Labels): void =>
  family.of(series).updateUnsafe(value, registryContext)

/** A snapshot of every series in the process-wide registry. */
export const snapshotMetrics = (): ReadonlyArray<Metric.Metric.Snapshot> => Metric.snapshotUnsafe(registryContext)

const samplers = new Set<() => void>()

/** Registers a gauge sampler for the life of the scope; it runs before every scrape and push. */
export const addGaugeSampler = (sample: () => void) =>
  Effect.acquireRelease(Effect.sync(() => samplers.add(sample)), () => Effect.sync(() => samplers.delete(sample)))

/** Runs every gauge sampler, so gauges show the state of now. */
export const sampleGauges = (): void => {
  for (const sample of samplers) sample()
}

/** Tokens of settled runs' model calls, by `model`, `kind` (input, output) and the run's `outcome`. */
export const upstreamTokens = counter(
  "arbiter_upstream_tokens_total",
  "Tokens of the model calls of settled runs, by model, kind (input, output) and run outcome (completed, failed, pending)"
)

/** What settled runs' model calls cost, in micro-USD, by `model` and the run's `outcome`. */
export const spendMicroUsd = counter(
  "arbiter_spend_micro_usd_total",
  "Cost of the model calls of settled runs in micro-USD, by model and run outcome (completed, failed, pending)"
)
