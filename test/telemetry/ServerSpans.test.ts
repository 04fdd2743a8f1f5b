/**
 * The server span of a request, with an in-memory exporter: named `{method} {route}` (the route's template, not the
 * raw path), `{method}` for a path no route serves, `HTTP` for a method outside the standard set; `http.route` set
 * from the template; `error.type` (the status code) on a 5xx answer only.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { assert, describe, layer } from "@effect/vitest"
import { SpanKind } from "@opentelemetry/api"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect } from "effect"
import { HttpMiddleware, HttpServerRequest, HttpServerResponse } from "effect/http"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { makeRouteLabeler } from "../../src/http/RouteLabels.js"
import { observeRequests } from "../../src/server/RequestObserver.js"
import { serverSpanName } from "../../src/server/RequestObserver.js"
import { tracingWith } from "../../src/telemetry/Telemetry.js"

const exporter = new InMemorySpanExporter()
const routes = makeRouteLabeler([{ method: "GET", path: "/v1/runs/:run_id" }, { method: "POST", path: "/v1/runs" }])

/** 503 for a run's page, 200 otherwise. */
const app = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  return HttpServerResponse.empty({ status: request.url.startsWith("/v1/runs/") ? 503 : 200 })
})

/**
 * A server answering with `app`, observed, inside the server span, as src/server/Listen.ts builds it; answers its
 * base URL.
 */
const serve = Effect.gen(function*() {
  const handler = yield* NodeHttpServer.makeHandler(observeRequests({ routes, accessLog: false })(app), {
    scope: yield* Effect.scope,
    middleware: HttpMiddleware.tracer
  }).pipe(Effect.provideService(HttpMiddleware.SpanNameGenerator, serverSpanName(routes)))
  const server = createServer(handler)
  yield* Effect.acquireRelease(
    Effect.callback<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
    () => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
  )
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

const spanOf = (method: string, base: string, path: string) =>
  Effect.gen(function*() {
    exporter.reset()
    yield* Effect.promise(() => fetch(`${base}${path}`, { method }).then((response) => response.arrayBuffer()))
    for (let i = 0; i < 100 && exporter.getFinishedSpans().length === 0; i++) yield* Effect.sleep("10 millis")
    const server = exporter.getFinishedSpans().find((span) => span.kind === SpanKind.SERVER)
    assert.isDefined(server)
    return server!
  })

layer(tracingWith("arbiter-test", new SimpleSpanProcessor(exporter)), { timeout: "30 seconds" })("server spans", (it) => {
  describe("names and attributes", () => {
    it.effect("a route's template names the span and sets http.route; a 5xx sets error.type", () =>
      Effect.gen(function*() {
        const base = yield* serve
        const run = yield* spanOf("GET", base, "/v1/runs/run_123?x=1")
        assert.strictEqual(run.name, "GET /v1/runs/:run_id")
        assert.strictEqual(run.attributes["http.route"], "/v1/runs/:run_id")
        assert.strictEqual(run.attributes["url.path"], "/v1/runs/run_123")
        assert.strictEqual(run.attributes["http.response.status_code"], 503)
        assert.strictEqual(run.attributes["error.type"], "503")

        const create = yield* spanOf("POST", base, "/v1/runs")
        assert.strictEqual(create.name, "POST /v1/runs")
        assert.strictEqual(create.attributes["http.request.method"], "POST")
        assert.strictEqual(create.attributes["http.response.status_code"], 200)
        assert.isUndefined(create.attributes["error.type"])
      }).pipe(Effect.scoped))

    it.effect("a path no route serves is named by its method; an odd method is named HTTP", () =>
      Effect.gen(function*() {
        const base = yield* serve
        const nowhere = yield* spanOf("GET", base, "/nowhere")
        assert.strictEqual(nowhere.name, "GET")
        assert.isUndefined(nowhere.attributes["http.route"])
        const odd = yield* spanOf("PROPFIND", base, "/v1/runs")
        assert.strictEqual(odd.name, "HTTP")
      }).pipe(Effect.scoped))
  })
})
