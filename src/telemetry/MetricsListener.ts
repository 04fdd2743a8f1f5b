/**
 * Where metrics leave the process. The Prometheus scrape endpoint `GET /metrics` is served on a listener of its
 * own, off unless `METRICS_PORT` is set, bound to `METRICS_HOST` (default 127.0.0.1): the public port never
 * answers it (it stays `404` there), so traffic figures, routes and pool sizes are not published to API callers and
 * need no credential, and the operator decides who may reach the port (a sidecar, a pod network, a firewall). The
 * page holds the service's families (`arbiter_*`, Metrics.ts) and the process's and Node's (RuntimeMetrics.ts). Under
 * `WORKERS`, the primary serves the port for the whole instance (InstanceMetrics.ts) and each worker answers the
 * primary's requests for its figures instead of listening. This layer also samples the gauges of the database pools
 * (and, when OTLP export is on, samples every gauge once a second so each push carries recent values).
 */
import cluster from "node:cluster"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Context, Effect, Layer, Option, Schedule } from "effect"
import type pg from "pg"
import { AppConfig } from "../config/AppConfig.js"
import { PgPools } from "../db/PgPool.js"
import { answerMetricsRequests } from "./InstanceMetrics.js"
import { familiesOf } from "./MetricFamilies.js"
import {
  addGaugeSampler,
  dbPoolConnections,
  dbPoolIdle,
  dbPoolWaiting,
  labels,
  record,
  sampleGauges,
  snapshotMetrics
} from "./Metrics.js"
import { PrometheusContentType, renderFamilies } from "./Prometheus.js"
import { runtimeFamilies, startRuntimeMetrics } from "./RuntimeMetrics.js"

/** Where the metrics listener listens; none when it is off. */
export class MetricsAddress extends Context.Service<
  MetricsAddress,
  Option.Option<{ readonly host: string; readonly port: number; readonly url: string }>
>()("MetricsAddress") {}

const poolSampler = (pools: { readonly main: pg.Pool; readonly asyncCommit: pg.Pool }) => {
  const entries = [{ pool: pools.main, series: labels({ pool: "main" }) }]
  if (pools.asyncCommit !== pools.main) entries.push({ pool: pools.asyncCommit, series: labels({ pool: "async_commit" }) })
  return () => {
    for (const { pool, series } of entries) {
      record(dbPoolConnections, pool.totalCount, series)
      record(dbPoolIdle, pool.idleCount, series)
      record(dbPoolWaiting, pool.waitingCount, series)
    }
  }
}

/** The service's families now, its gauges sampled first. */
const serviceFamilies = () => {
  sampleGauges()
  return familiesOf(snapshotMetrics())
}

const answer = (request: IncomingMessage, response: ServerResponse): void => {
  const path = (request.url ?? "/").split("?", 1)[0]
  if (path !== "/metrics") {
    response.writeHead(404, { "content-length": "0" }).end()
    return
  }
  if (request.method !== "GET" && request.method !== "HEAD") {
    response.writeHead(405, { allow: "GET, HEAD", "content-length": "0" }).end()
    return
  }
  const body = renderFamilies([...serviceFamilies(), ...runtimeFamilies()])
  response.writeHead(200, { "content-type": PrometheusContentType, "content-length": Buffer.byteLength(body) })
  response.end(request.method === "HEAD" ? undefined : body)
}

/** Serves `GET /metrics` on host and port until the scope closes. */
export const serveMetrics = (host: string, port: number) =>
  Effect.acquireRelease(
    Effect.callback<ReturnType<typeof createServer>, Error>((resume) => {
      const server = createServer(answer)
      server.once("error", (error) => resume(Effect.fail(error)))
      server.listen({ host, port, exclusive: true }, () => resume(Effect.succeed(server)))
    }),
    (server) => Effect.callback<void>((resume) => {
      server.close(() => resume(Effect.void))
      server.closeAllConnections()
    })
  ).pipe(Effect.map((server) => {
    const address = server.address() as AddressInfo
    const shown = address.family === "IPv6" ? `[${address.address}]` : address.address
    return { host: address.address, port: address.port, url: `http://${shown}:${address.port}/metrics` }
  }))

/** A worker's part: its figures, sent to the primary (InstanceMetrics.ts) when it asks, for the life of the scope. */
const answerPrimary = Effect.acquireRelease(
  Effect.sync(() => answerMetricsRequests(() => ({ service: serviceFamilies(), runtime: runtimeFamilies() }))),
  (stop) => Effect.sync(stop)
)

/** Pool gauges, the OTLP gauge sampling and the Prometheus listener, as configured. */
export const MetricsLive = Layer.effect(
  MetricsAddress,
  Effect.gen(function*() {
    const config = yield* AppConfig
    yield* addGaugeSampler(poolSampler(yield* PgPools))
    if (Option.isSome(config.otlpEndpoint)) {
      yield* Effect.forkScoped(Effect.repeat(Effect.sync(sampleGauges), Schedule.spaced("1 second")))
    }
    if (Option.isNone(config.metricsPort)) return Option.none()
    startRuntimeMetrics()
    if (cluster.isWorker) {
      yield* answerPrimary
      return Option.none()
    }
    const address = yield* serveMetrics(config.metricsHost, config.metricsPort.value)
    yield* Effect.logInfo(`metrics on ${address.url}`)
    return Option.some(address)
  })
)
