/**
 * With `OTEL_EXPORTER_OTLP_ENDPOINT` set, the metrics are pushed over OTLP/HTTP (JSON) to `<endpoint>/v1/metrics`:
 * a local receiver collects the POSTs and finds the request counts by route and status, the latency histogram and
 * the pool gauges, under a resource naming the service and this process.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { assert, layer } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Layer, Option } from "effect"
import { snapshotMetrics } from "../../src/telemetry/Metrics.js"
import { AppConfig } from "../../src/config/AppConfig.js"
import { ServerAddress } from "../../src/server/Listen.js"
import { TelemetryLive } from "../../src/telemetry/Telemetry.js"
import { rawRequest } from "../support/RawHttp.js"
import { TestServerLive } from "../support/TestServer.js"

interface Posted {
  readonly path: string
  readonly body: string
}

/** A collector stand-in: answers 200 to every POST and keeps what it was sent. */
class Receiver extends Context.Service<Receiver, {
  readonly url: string
  readonly posted: () => ReadonlyArray<Posted>
}>()("test/OtlpReceiver") {
  static readonly layer = Layer.effect(
    Receiver,
    Effect.gen(function*() {
      const posted: Array<Posted> = []
      const server = http.createServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          posted.push({ path: request.url ?? "", body: Buffer.concat(chunks).toString("utf8") })
          response.writeHead(200, { "content-type": "application/json" }).end("{}")
        })
      })
      yield* Effect.acquireRelease(
        Effect.callback<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
        () => Effect.callback<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
      )
      return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, posted: () => [...posted] }
    })
  )
}

/** The server as `npm start` runs it with an endpoint set: telemetry from the same settings as the server. */
const ExportingServer = Layer.unwrap(Effect.map(Receiver, (receiver) => {
  const settings = { otlpEndpoint: Option.some(receiver.url), otlpMetricsIntervalMs: 200, serviceName: "arbiter-otlp-test" }
  const telemetry = TelemetryLive.pipe(
    Layer.provide(AppConfig.layerWith(settings)),
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({})))
  )
  return TestServerLive(settings).pipe(Layer.provide(telemetry))
})).pipe(Layer.provideMerge(Receiver.layer))

type DataPoint = { readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: { readonly stringValue?: string } }> }

const attribute = (point: DataPoint, key: string) => point.attributes.find((a) => a.key === key)?.value.stringValue

/** The metrics of the latest export that has the request counter, by name. */
const latestMetrics = (posted: ReadonlyArray<Posted>) => {
  for (const { body, path } of [...posted].reverse()) {
    if (path !== "/v1/metrics" || !body.includes("arbiter_http_requests_total")) continue
    const document = JSON.parse(body)
    const resource = document.resourceMetrics[0]
    const metrics = new Map<string, any>(resource.scopeMetrics.flatMap((scope: any) => scope.metrics).map((m: any) => [m.name, m]))
    return { resource: resource.resource, metrics }
  }
  return undefined
}

/**
 * The process's own count of `GET /healthz` answered 200. Metrics are process-wide and the files of a test worker
 * share its process, so the export also carries what earlier files counted: the test asserts on what it added.
 */
const healthCountHere = Effect.sync(() => {
  for (const snapshot of snapshotMetrics()) {
    const tags = snapshot.attributes ?? {}
    if (snapshot.id === "arbiter_http_requests_total" && tags.route === "/healthz" && tags.status === "200") {
      return Number((snapshot.state as { readonly count: number | bigint }).count)
    }
  }
  return 0
})

layer(ExportingServer, { excludeTestServices: true, timeout: "60 seconds" })("OTLP metrics export", (it) => {
  it.effect("POSTs the metrics to <endpoint>/v1/metrics", () =>
    Effect.gen(function*() {
      const { url } = yield* ServerAddress
      const receiver = yield* Receiver
      const before = yield* healthCountHere
      for (let i = 0; i < 2; i++) assert.strictEqual((yield* rawRequest(url, { path: "/healthz" })).status, 200)
      let exported = latestMetrics(receiver.posted())
      const healthCount = () => {
        const points: ReadonlyArray<DataPoint & { asInt?: number; asDouble?: number }> =
          exported?.metrics.get("arbiter_http_requests_total")?.sum.dataPoints ?? []
        const point = points.find((p) => attribute(p, "route") === "/healthz" && attribute(p, "status") === "200")
        return point === undefined ? 0 : Number(point.asInt ?? point.asDouble)
      }
      for (let i = 0; i < 100 && healthCount() < before + 2; i++) {
        yield* Effect.sleep("100 millis")
        exported = latestMetrics(receiver.posted())
      }
      assert.isDefined(exported, "a metrics export arrived")
      assert.strictEqual(healthCount(), before + 2)
      const histogram = exported!.metrics.get("arbiter_http_request_duration_seconds").histogram
      assert.isTrue(histogram.dataPoints.some((p: DataPoint) => attribute(p, "route") === "/healthz"))
      assert.isAbove(histogram.dataPoints[0].explicitBounds.length, 5)
      assert.isDefined(exported!.metrics.get("arbiter_db_pool_connections")?.gauge)
      const resource = new Map(exported!.resource.attributes.map((a: any) => [a.key, a.value.stringValue]))
      assert.strictEqual(resource.get("service.name"), "arbiter-otlp-test")
      assert.match(String(resource.get("service.instance.id")), new RegExp(`:${process.pid}$`))
    }))
})
