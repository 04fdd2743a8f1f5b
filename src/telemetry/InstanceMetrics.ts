/**
 * One `/metrics` per instance under `WORKERS`: the primary serves `METRICS_PORT` (one stable port, whichever workers
 * come and go) and, at each scrape, asks every worker for its figures over node:cluster's IPC channel, then adds
 * them up (MetricFamilies.ts `addFamilies`): the service's counters, histograms and gauges summed across workers;
 * the process and Node figures of each process apart, labelled `worker` (`primary`, or the worker's slot `1` to
 * `WORKERS`, which a replacement worker takes over, so the label's values stay as few as the workers).
 *
 * Counters never go backwards while the primary lives: when a worker stops, the counters and histograms of its last
 * reply are kept and added to every later sum (its gauges go with it). What a dead worker counted after its last
 * reply (at most one scrape interval's worth) is lost, never double counted, so a sum can only grow and Prometheus's
 * `rate()` reads no false reset. A restart of the whole instance (the primary) starts every counter from zero, which
 * Prometheus reads as the reset it is. Per-worker `process_*` counters do reset when their slot's worker is replaced
 * (`process_start_time_seconds` says when), as any process's do.
 *
 * A worker says it answers by sending its figures once unasked, as soon as it can (while it starts, before it
 * serves). A scrape waits for the workers that said so, at most `ReplyWaitMs`; a worker that does not answer in time
 * (busy) is counted with its last reply, and one still starting is asked but not waited for.
 */
import cluster, { type Worker } from "node:cluster"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Config, Effect, Option } from "effect"
import { addFamilies, type Family, withLabels } from "./MetricFamilies.js"
import { PrometheusContentType, renderFamilies } from "./Prometheus.js"
import { runtimeFamilies, startRuntimeMetrics } from "./RuntimeMetrics.js"

/** How long a scrape waits for the workers' replies before it uses the last reply of those that did not answer. */
export const ReplyWaitMs = 2_000

/** A request for a worker's figures. */
interface MetricsRequest {
  readonly arbiterMetrics: "request"
  readonly id: number
}

/** A worker's figures: the service's (summed by the primary) and its process's (labelled by slot). */
export interface MetricsReply {
  readonly arbiterMetrics: "reply"
  readonly id: number
  readonly service: ReadonlyArray<Family>
  readonly runtime: ReadonlyArray<Family>
}

const isRequest = (message: unknown): message is MetricsRequest =>
  typeof message === "object" && message !== null && (message as { arbiterMetrics?: unknown }).arbiterMetrics === "request"

const isReply = (message: unknown): message is MetricsReply =>
  typeof message === "object" && message !== null && (message as { arbiterMetrics?: unknown }).arbiterMetrics === "reply"

/** The id of the reply a worker sends unasked, to say it answers. */
const HelloId = 0

/**
 * In a worker: sends its figures once unasked, then answers the primary's requests with `figures()` until the
 * returned function is called. Replies go out only while the IPC channel is open.
 */
export const answerMetricsRequests = (figures: () => Pick<MetricsReply, "service" | "runtime">): () => void => {
  const send = (id: number) => {
    if (process.send === undefined || !process.connected) return
    process.send({ arbiterMetrics: "reply", id, ...figures() } satisfies MetricsReply)
  }
  const onMessage = (message: unknown) => isRequest(message) && send(message.id)
  process.on("message", onMessage)
  send(HelloId)
  return () => void process.off("message", onMessage)
}

/** The metrics listener's settings, read by the primary (the same settings as AppConfig's `METRICS_*`). */
const MetricsAddressConfig = Config.all({
  port: Config.option(Config.Port("METRICS_PORT")),
  host: Config.String("METRICS_HOST").pipe(Config.withDefault("127.0.0.1"))
})

interface WorkerState {
  readonly slot: string
  /** It has replied once: scrapes wait for its replies. */
  answers: boolean
  service: ReadonlyArray<Family>
  runtime: ReadonlyArray<Family>
}

/** Only counters and histograms outlive their worker; its gauges describe a process that is gone. */
const cumulative = (families: ReadonlyArray<Family>): Array<Family> => families.filter((family) => family.type !== "gauge")

/** The primary's view of its workers' figures. */
export class WorkerMetrics {
  private readonly workers = new Map<number, WorkerState>()
  private retired: ReadonlyArray<Family> = []
  private exits = 0
  private nextId = HelloId + 1
  private readonly pending = new Map<number, { readonly waiting: Set<number>; readonly done: () => void }>()

  /** A worker started: it takes the lowest free slot. */
  forked(worker: Worker): void {
    const taken = new Set([...this.workers.values()].map((state) => state.slot))
    let slot = 1
    while (taken.has(String(slot))) slot++
    this.workers.set(worker.id, {
      slot: String(slot),
      answers: false,
      service: [],
      runtime: []
    })
  }

  /** A worker stopped: its counters and histograms are kept in the sums, and its slot is freed. */
  exited(worker: Worker): void {
    const state = this.workers.get(worker.id)
    if (state === undefined) return
    this.workers.delete(worker.id)
    this.retired = addFamilies([this.retired, cumulative(state.service)])
    this.exits++
    for (const scrape of this.pending.values()) {
      scrape.waiting.delete(worker.id)
      if (scrape.waiting.size === 0) scrape.done()
    }
  }

  /** A worker's reply. */
  replied(worker: Worker, reply: MetricsReply): void {
    const state = this.workers.get(worker.id)
    if (state === undefined) return
    state.answers = true
    state.service = reply.service
    state.runtime = reply.runtime
    const scrape = this.pending.get(reply.id)
    if (scrape === undefined) return
    scrape.waiting.delete(worker.id)
    if (scrape.waiting.size === 0) scrape.done()
  }

  /** Asks every worker for its figures; resolves once all replied, or after `waitMs`. */
  collect(workers: ReadonlyArray<Worker>, waitMs: number = ReplyWaitMs): Promise<void> {
    const id = this.nextId++
    const waiting = new Set<number>()
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => done(), waitMs)
      const done = () => {
        clearTimeout(timer)
        this.pending.delete(id)
        resolve()
      }
      this.pending.set(id, { waiting, done })
      for (const worker of workers) {
        const state = this.workers.get(worker.id)
        if (state === undefined || !worker.isConnected()) continue
        if (state.answers) waiting.add(worker.id)
        worker.send({ arbiterMetrics: "request", id } satisfies MetricsRequest, (error: Error | null) => {
          if (error !== null && waiting.delete(worker.id) && waiting.size === 0) done()
        })
      }
      if (waiting.size === 0) done()
    })
  }

  /** The instance's families: the service's summed, each process's runtime figures by `worker`. */
  families(primaryRuntime: ReadonlyArray<Family>): Array<Family> {
    const states = [...this.workers.values()]
    const instance: ReadonlyArray<Family> = [
      { type: "gauge", name: "arbiter_workers", help: "Worker processes running", series: [{ labels: {}, value: states.length }] },
      {
        type: "counter",
        name: "arbiter_worker_exits_total",
        help: "Worker processes that stopped since the instance started (each is started again)",
        series: [{ labels: {}, value: this.exits }]
      }
    ]
    return addFamilies([
      this.retired,
      ...states.map((state) => state.service),
      instance,
      withLabels(primaryRuntime, { worker: "primary" }),
      ...states.map((state) => withLabels(state.runtime, { worker: state.slot }))
    ])
  }
}

const answerScrape = (metrics: WorkerMetrics) => (request: IncomingMessage, response: ServerResponse): void => {
  const path = (request.url ?? "/").split("?", 1)[0]
  if (path !== "/metrics") return void response.writeHead(404, { "content-length": "0" }).end()
  if (request.method !== "GET" && request.method !== "HEAD") {
    return void response.writeHead(405, { allow: "GET, HEAD", "content-length": "0" }).end()
  }
  const workers = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined)
  metrics.collect(workers).then(() => {
    const body = renderFamilies(metrics.families(runtimeFamilies()))
    response.writeHead(200, { "content-type": PrometheusContentType, "content-length": Buffer.byteLength(body) })
    response.end(request.method === "HEAD" ? undefined : body)
  })
}

/**
 * In the primary: serves the instance's `GET /metrics` on `METRICS_HOST`:`METRICS_PORT` when the
 * port is set (resolving with its URL), else nothing (resolving with undefined). Fails when the port cannot be bound.
 */
export const serveInstanceMetrics = (): Promise<string | undefined> => {
  const settings = Effect.runSync(Effect.option(MetricsAddressConfig))
  if (Option.isNone(settings) || Option.isNone(settings.value.port)) return Promise.resolve(undefined)
  const { host, port } = { host: settings.value.host, port: settings.value.port.value }
  startRuntimeMetrics()
  const metrics = new WorkerMetrics()
  cluster.on("fork", (worker) => metrics.forked(worker))
  cluster.on("exit", (worker) => metrics.exited(worker))
  cluster.on("message", (worker, message) => isReply(message) && metrics.replied(worker, message))
  return new Promise((resolve, reject) => {
    const server = createServer(answerScrape(metrics))
    server.once("error", reject)
    server.listen({ host, port, exclusive: true }, () => {
      const address = server.address() as AddressInfo
      const shown = address.family === "IPv6" ? `[${address.address}]` : address.address
      resolve(`http://${shown}:${address.port}/metrics`)
    })
  })
}
