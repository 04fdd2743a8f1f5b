/**
 * One `/metrics` per instance under `WORKERS` (src/telemetry/InstanceMetrics.ts): the primary adds up its workers'
 * figures, keeps a stopped worker's counters and histograms in the sums (never its gauges), labels each process's
 * runtime figures by its slot, and uses a worker's last reply when it does not answer in time. Then the service
 * itself (PostgreSQL only: the embedded database runs one process): one port for two workers, and a killed worker's
 * counts kept.
 */
import { assert, describe, it } from "@effect/vitest"
import type { Worker } from "node:cluster"
import { readFileSync } from "node:fs"
import { Effect } from "effect"
import { freePort, processTree, startNode } from "../../bench/support/Processes.js"
import { type MetricsReply, WorkerMetrics } from "../../src/telemetry/InstanceMetrics.js"
import type { Family } from "../../src/telemetry/MetricFamilies.js"
import { databaseMode, freshPostgresDatabase } from "../support/TestDatabase.js"

/** A worker as the primary sees it, answering each request with `reply` (or never, when it returns undefined). */
const fakeWorker = (id: number, metrics: WorkerMetrics, reply: () => Omit<MetricsReply, "arbiterMetrics" | "id"> | undefined) => {
  const worker = {
    id,
    isConnected: () => true,
    send: (message: { readonly id: number }) => {
      const figures = reply()
      if (figures !== undefined) queueMicrotask(() => metrics.replied(worker, { arbiterMetrics: "reply", id: message.id, ...figures }))
      return true
    }
  } as unknown as Worker
  return worker
}

const service = (requests: number, inFlight: number, latencies: ReadonlyArray<number>): Array<Family> => [
  { type: "counter", name: "arbiter_http_requests_total", help: "Requests", series: [{ labels: { route: "/healthz" }, value: requests }] },
  { type: "gauge", name: "arbiter_runs_in_flight", help: "In flight", series: [{ labels: {}, value: inFlight }] },
  {
    type: "histogram",
    name: "arbiter_http_request_duration_seconds",
    help: "Latency",
    series: [{ labels: { route: "/healthz" }, bounds: [0.1, 1], counts: [latencies[0]!, latencies[1]!], sum: latencies[2]!, count: latencies[3]! }]
  }
]

const runtime = (cpu: number): Array<Family> => [
  { type: "counter", name: "process_cpu_seconds_total", help: "CPU", series: [{ labels: {}, value: cpu }] }
]

const valueOf = (families: ReadonlyArray<Family>, name: string, labels: Readonly<Record<string, string>> = {}) => {
  const family = families.find((each) => each.name === name)
  const series = family?.series.find((each) => JSON.stringify(each.labels) === JSON.stringify(labels))
  return series === undefined ? undefined : "value" in series ? series.value : series
}

describe("WorkerMetrics", () => {
  it.live("sums the workers' figures, labels their runtime by slot, and keeps a stopped worker's counters", () =>
    Effect.gen(function*() {
      const metrics = new WorkerMetrics()
      let firstRequests = 5
      const first = fakeWorker(1, metrics, () => ({ service: service(firstRequests, 2, [1, 2, 0.5, 3]), runtime: runtime(1.5) }))
      const second = fakeWorker(2, metrics, () => ({ service: service(7, 1, [0, 1, 0.9, 1]), runtime: runtime(2.5) }))
      metrics.forked(first)
      metrics.forked(second)
      metrics.replied(first, { arbiterMetrics: "reply", id: 0, service: [], runtime: [] })
      metrics.replied(second, { arbiterMetrics: "reply", id: 0, service: [], runtime: [] })
      yield* Effect.promise(() => metrics.collect([first, second]))
      let families = metrics.families(runtime(0.25))
      assert.strictEqual(valueOf(families, "arbiter_http_requests_total", { route: "/healthz" }), 12)
      assert.strictEqual(valueOf(families, "arbiter_runs_in_flight"), 3)
      assert.deepStrictEqual(valueOf(families, "arbiter_http_request_duration_seconds", { route: "/healthz" }), {
        labels: { route: "/healthz" },
        bounds: [0.1, 1],
        counts: [1, 3],
        sum: 1.4,
        count: 4
      })
      assert.strictEqual(valueOf(families, "process_cpu_seconds_total", { worker: "1" }), 1.5)
      assert.strictEqual(valueOf(families, "process_cpu_seconds_total", { worker: "2" }), 2.5)
      assert.strictEqual(valueOf(families, "process_cpu_seconds_total", { worker: "primary" }), 0.25)
      assert.strictEqual(valueOf(families, "arbiter_workers"), 2)

      // Worker 1 counts 3 more, is scraped, then dies; its replacement takes slot 1 and starts from zero.
      firstRequests = 8
      yield* Effect.promise(() => metrics.collect([first, second]))
      metrics.exited(first)
      const replacement = fakeWorker(3, metrics, () => ({ service: service(1, 4, [0, 0, 0, 0]), runtime: runtime(0.1) }))
      metrics.forked(replacement)
      metrics.replied(replacement, { arbiterMetrics: "reply", id: 0, service: [], runtime: [] })
      yield* Effect.promise(() => metrics.collect([second, replacement]))
      families = metrics.families(runtime(0.25))
      assert.strictEqual(valueOf(families, "arbiter_http_requests_total", { route: "/healthz" }), 8 + 7 + 1, "counters never go back")
      assert.strictEqual(valueOf(families, "arbiter_runs_in_flight"), 1 + 4, "a dead worker's gauges go with it")
      assert.strictEqual((valueOf(families, "arbiter_http_request_duration_seconds", { route: "/healthz" }) as { count: number }).count, 4)
      assert.strictEqual(valueOf(families, "process_cpu_seconds_total", { worker: "1" }), 0.1, "the replacement takes slot 1")
      assert.isUndefined(valueOf(families, "process_cpu_seconds_total", { worker: "3" }))
      assert.strictEqual(valueOf(families, "arbiter_worker_exits_total"), 1)
    }))

  it.live("a starting worker is not waited for; one that does not answer in time is counted with its last reply", () =>
    Effect.gen(function*() {
      const metrics = new WorkerMetrics()
      let answering = false
      const worker = fakeWorker(1, metrics, () => answering ? { service: service(4, 0, [0, 0, 0, 0]), runtime: runtime(1) } : undefined)
      metrics.forked(worker)
      // Still starting (it never replied): a scrape asks it but waits for nothing (a wait would outlast the test).
      yield* Effect.promise(() => metrics.collect([worker], 600_000))
      assert.isUndefined(valueOf(metrics.families([]), "arbiter_http_requests_total", { route: "/healthz" }))
      answering = true
      metrics.replied(worker, { arbiterMetrics: "reply", id: 0, service: [], runtime: [] })
      yield* Effect.promise(() => metrics.collect([worker], 600_000))
      assert.strictEqual(valueOf(metrics.families([]), "arbiter_http_requests_total", { route: "/healthz" }), 4)
      answering = false
      yield* Effect.promise(() => metrics.collect([worker], 50))
      assert.strictEqual(valueOf(metrics.families([]), "arbiter_http_requests_total", { route: "/healthz" }), 4)
    }))
})

/** The value of a sample line of a Prometheus page, or undefined. */
const sample = (page: string, series: string): number | undefined => {
  const line = page.split("\n").find((each) => each.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

const scrape = (url: string) => Effect.promise(() => fetch(url).then((response) => response.text()))

/** The worker processes of a primary (its children running the server, not tsx's helpers). */
const workerPids = (primary: number): Array<number> =>
  processTree(primary).filter((pid) => pid !== primary && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("main.ts"))

describe.skipIf(databaseMode() !== "postgres")("the instance's /metrics under WORKERS (PostgreSQL)", () => {
  it.live("one port for two workers; a killed worker's counts stay in the sums", () =>
    Effect.gen(function*() {
      const database = yield* freshPostgresDatabase
      const metricsPort = yield* Effect.promise(freePort)
      const service = yield* Effect.acquireRelease(
        Effect.promise(() =>
          startNode("src/main.ts", {
            DATABASE_URL: database.url,
            WORKERS: "2",
            LOG_LEVEL: "warn",
            BILLING_PROVIDER: "local",
            METRICS_PORT: String(metricsPort)
          }, "/readyz")
        ),
        (child) => Effect.promise(child.stop)
      )
      const url = `http://127.0.0.1:${metricsPort}/metrics`
      yield* Effect.promise(() => Promise.all(Array.from({ length: 20 }, () => fetch(`${service.url}/healthz`).then((r) => r.text()))))
      const healthz = `arbiter_http_requests_total{method="GET",route="/healthz",status="200"}`
      let page = yield* scrape(url)
      // Each worker reports once it is up (the first may answer /readyz before the second is).
      const reported = (page: string) =>
        ["1", "2"].every((slot) => sample(page, `process_cpu_seconds_total{worker="${slot}"}`) !== undefined)
      for (let i = 0; i < 300 && !reported(page); i++) {
        yield* Effect.sleep("100 millis")
        page = yield* scrape(url)
      }
      const before = sample(page, healthz)!
      assert.isAtLeast(before, 20, page)
      assert.strictEqual(sample(page, "arbiter_workers"), 2)
      for (const worker of ["primary", "1", "2"]) {
        assert.isAbove(sample(page, `process_cpu_seconds_total{worker="${worker}"}`)!, 0, page)
        assert.isAbove(sample(page, `process_resident_memory_bytes{worker="${worker}"}`)!, 0, worker)
      }
      for (const line of page.split("\n").filter((each) => each !== "")) {
        assert.match(line, /^(arbiter_|process_|nodejs_|# (HELP|TYPE) )/, "only the service's, process and Node families")
      }

      const other = yield* Effect.promise(() => fetch(`http://127.0.0.1:${metricsPort}/healthz`).then((response) => response.status))
      assert.strictEqual(other, 404, "the primary's listener serves only /metrics")
      const post = yield* Effect.promise(() => fetch(url, { method: "POST" }).then((response) => response.status))
      assert.strictEqual(post, 405)

      const workers = workerPids(service.process.pid!)
      assert.strictEqual(workers.length, 2, service.output())
      process.kill(workers[0]!, "SIGKILL")
      for (let i = 0; i < 300; i++) {
        page = yield* scrape(url)
        if (sample(page, "arbiter_worker_exits_total") === 1 && sample(page, "arbiter_workers") === 2) break
        yield* Effect.sleep("100 millis")
      }
      assert.strictEqual(sample(page, "arbiter_worker_exits_total"), 1, page)
      assert.strictEqual(sample(page, "arbiter_workers"), 2, page)
      assert.isAtLeast(sample(page, healthz)!, before, "the killed worker's requests stay counted")
    }), { timeout: 120_000 })
})
