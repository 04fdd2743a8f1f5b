/**
 * `GET /metrics` on the metrics listener (`METRICS_PORT`): after a few requests it shows counts and latency
 * histograms by route template and status, run outcomes and credit admissions, tokens and spend by model and run
 * outcome, the database pool gauges, and the process's and Node's own figures, in the Prometheus text format. Exposure: the listener is off unless the port is set, binds `METRICS_HOST`
 * (127.0.0.1 by default), serves only `/metrics`, and the public port never answers `/metrics`.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { ServerAddress } from "../../src/server/Listen.js"
import { MetricsAddress } from "../../src/telemetry/MetricsListener.js"
import { rawRequest } from "../support/RawHttp.js"
import { oneQuestion, postRun } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerLive } from "../support/TestServer.js"

const scrape = Effect.gen(function*() {
  const address = Option.getOrThrow(yield* MetricsAddress)
  const response = yield* rawRequest(`http://127.0.0.1:${address.port}`, { path: "/metrics" })
  assert.strictEqual(response.status, 200)
  assert.strictEqual(response.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8")
  return response.text
})

/** The value of the sample with exactly this name and these labels (in this order), or undefined. */
const sample = (text: string, name: string, labels: string): number | undefined => {
  const series = labels === "" ? `${name} ` : `${name}{${labels}} `
  const line = text.split("\n").find((row) => row.startsWith(series))
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1))
}

/**
 * How much a series grew between two scrapes (a missing series counts 0). Metrics are process-wide and the files of
 * a test worker share its process, so a file sees what earlier files counted: it asserts on what it added.
 */
const growth = (before: string, after: string) => (name: string, labels: string): number =>
  (sample(after, name, labels) ?? 0) - (sample(before, name, labels) ?? 0)

layer(TestServerLive({ metricsPort: Option.some(0) }), { excludeTestServices: true, timeout: "60 seconds" })("metrics listener", (it) => {
  describe("GET /metrics", () => {
    it.effect("counts requests and their latency by route template and status", () =>
      Effect.gen(function*() {
        const { url } = yield* ServerAddress
        const before = yield* scrape
        for (let i = 0; i < 3; i++) assert.strictEqual((yield* rawRequest(url, { path: "/healthz" })).status, 200)
        assert.strictEqual((yield* rawRequest(url, { path: "/v1/runs/run_0123456789abcdef0123456789abcdef" })).status, 401)
        assert.strictEqual((yield* rawRequest(url, { path: "/no/such/path" })).status, 404)
        const text = yield* scrape
        const added = growth(before, text)
        assert.strictEqual(added("arbiter_http_requests_total", `method="GET",route="/healthz",status="200"`), 3)
        assert.strictEqual(added("arbiter_http_requests_total", `method="GET",route="/v1/runs/:run_id",status="401"`), 1)
        assert.strictEqual(added("arbiter_http_requests_total", `method="GET",route="unmatched",status="404"`), 1)
        assert.notInclude(text, "run_0123456789abcdef", "raw paths never become labels")
        assert.include(text, "# TYPE arbiter_http_requests_total counter")
        assert.include(text, "# TYPE arbiter_http_request_duration_seconds histogram")
        const histogram = `method="GET",route="/healthz",status="200"`
        assert.strictEqual(added("arbiter_http_request_duration_seconds_bucket", `${histogram},le="+Inf"`), 3)
        assert.strictEqual(added("arbiter_http_request_duration_seconds_count", histogram), 3)
        assert.isDefined(sample(text, "arbiter_http_request_duration_seconds_bucket", `${histogram},le="0.005"`))
        assert.isAbove(sample(text, "arbiter_http_request_duration_seconds_sum", histogram)!, 0)
      }))

    it.effect("counts runs by outcome and credit admitted or refused", () =>
      Effect.gen(function*() {
        const paying = yield* seedOrganization()
        const broke = yield* seedOrganization({ billing: true })
        const idempotencyKey = `metrics-${Date.now()}`
        const before = yield* scrape
        const completed = yield* postRun(paying.secret, oneQuestion(), idempotencyKey)
        assert.strictEqual(completed.status, 200)
        assert.strictEqual((yield* postRun(paying.secret, oneQuestion(), idempotencyKey)).status, 200)
        assert.strictEqual((yield* postRun(broke.secret, oneQuestion())).status, 402)
        assert.strictEqual((yield* postRun(paying.secret, oneQuestion(), null)).status, 400)
        const after = yield* scrape
        assert.strictEqual(sample(after, "arbiter_runs_using_process", ""), 0, "each run's wait on the upstream ended")
        const added = growth(before, after)
        const runs = (labels: string) => added("arbiter_runs_total", labels)
        assert.strictEqual(runs(`route="/v1/runs",outcome="completed",code="none"`), 1)
        assert.strictEqual(runs(`route="/v1/runs",outcome="replayed",code="none"`), 1)
        assert.strictEqual(runs(`route="/v1/runs",outcome="refused",code="insufficient_credits"`), 1)
        assert.strictEqual(runs(`route="/v1/runs",outcome="rejected",code="idempotency_key_required"`), 1)
        const credit = (labels: string) => added("arbiter_credit_admissions_total", labels)
        assert.strictEqual(credit(`route="/v1/runs",result="admitted",code="none"`), 1)
        assert.strictEqual(credit(`route="/v1/runs",result="refused",code="insufficient_credits"`), 1)
        assert.strictEqual(added("arbiter_http_requests_total", `method="POST",route="/v1/runs",status="402"`), 1)
        // Tokens and spend of the one run settled (the replay and the refusals call no model), by model and outcome.
        const run = completed.json() as {
          decision: { model: string }
          usage: { input_tokens: number; output_tokens: number }
          cost_micros: number
        }
        const model = `model="${run.decision.model}"`
        assert.isAbove(run.usage.input_tokens, 0)
        assert.strictEqual(added("arbiter_upstream_tokens_total", `${model},kind="input",outcome="completed"`), run.usage.input_tokens)
        assert.strictEqual(added("arbiter_upstream_tokens_total", `${model},kind="output",outcome="completed"`), run.usage.output_tokens)
        assert.strictEqual(added("arbiter_spend_micro_usd_total", `${model},outcome="completed"`), run.cost_micros)
        assert.include(after, "# TYPE arbiter_upstream_tokens_total counter")
        assert.notInclude(after.split("\n").filter((line) => line.startsWith("arbiter_spend")).join("\n"), paying.organizationId)
      }))

    it.effect("shows the process's and Node's own figures under Prometheus's names and units", () =>
      Effect.gen(function*() {
        const text = yield* scrape
        for (const [name, type] of [
          ["process_cpu_seconds_total", "counter"],
          ["process_cpu_user_seconds_total", "counter"],
          ["process_resident_memory_bytes", "gauge"],
          ["process_start_time_seconds", "gauge"],
          ["process_open_fds", "gauge"],
          ["nodejs_heap_size_used_bytes", "gauge"],
          ["nodejs_heap_size_total_bytes", "gauge"],
          ["nodejs_eventloop_lag_seconds", "gauge"],
          ["nodejs_eventloop_lag_p99_seconds", "gauge"],
          ["nodejs_gc_duration_seconds", "histogram"],
          ["nodejs_active_resources", "gauge"]
        ] as const) {
          assert.include(text, `# TYPE ${name} ${type}`, name)
        }
        assert.isAbove(sample(text, "process_cpu_seconds_total", "")!, 0)
        assert.isAbove(sample(text, "process_resident_memory_bytes", "")!, 1_000_000)
        const started = sample(text, "process_start_time_seconds", "")!
        assert.isAtMost(Math.abs(started - (Date.now() / 1000 - process.uptime())), 2)
        assert.isAbove(sample(text, "nodejs_heap_size_used_bytes", "")!, 0)
        assert.isAtLeast(sample(text, "nodejs_eventloop_lag_seconds", "")!, 0)
        for (const line of text.split("\n").filter((row) => row !== "" && !row.startsWith("#"))) {
          assert.match(line, /^(arbiter|process|nodejs)_[a-zA-Z0-9_:]*(\{[^}]*\})? \S+$/)
        }
      }))

    it.effect("reads the database pool and ledger gauges at scrape time", () =>
      Effect.gen(function*() {
        const text = yield* scrape
        assert.include(text, "# TYPE arbiter_db_pool_connections gauge")
        assert.isAtLeast(sample(text, "arbiter_db_pool_connections", `pool="main"`)!, 1)
        assert.isDefined(sample(text, "arbiter_db_pool_idle_connections", `pool="main"`))
        assert.strictEqual(sample(text, "arbiter_db_pool_waiting_clients", `pool="main"`), 0)
        assert.isDefined(sample(text, "arbiter_runs_concurrency_limit", ""))
        assert.isDefined(sample(text, "arbiter_runs_using_process", ""))
        assert.include(text, "# TYPE arbiter_ledger_settlements_waiting gauge")
        assert.strictEqual(sample(text, "arbiter_ledger_settlements_waiting", ""), 0, "no settlement waits between runs")
      }))
  })

  describe("exposure", () => {
    it.effect("the listener binds 127.0.0.1 by default and serves only GET /metrics", () =>
      Effect.gen(function*() {
        const address = Option.getOrThrow(yield* MetricsAddress)
        assert.strictEqual(address.host, "127.0.0.1")
        const base = `http://127.0.0.1:${address.port}`
        assert.strictEqual((yield* rawRequest(base, { path: "/healthz" })).status, 404)
        assert.strictEqual((yield* rawRequest(base, { method: "POST", path: "/metrics", body: "" })).status, 405)
      }))

    it.effect("the public port does not serve /metrics", () =>
      Effect.gen(function*() {
        const { url } = yield* ServerAddress
        assert.strictEqual((yield* rawRequest(url, { path: "/metrics" })).status, 404)
      }))
  })
})

layer(TestServerLive(), { excludeTestServices: true, timeout: "60 seconds" })("metrics listener off (the default)", (it) => {
  it.effect("no listener without METRICS_PORT, and /metrics is 404 on the public port", () =>
    Effect.gen(function*() {
      assert.isTrue(Option.isNone(yield* MetricsAddress))
      const { url } = yield* ServerAddress
      assert.strictEqual((yield* rawRequest(url, { path: "/metrics" })).status, 404)
    }))
})
