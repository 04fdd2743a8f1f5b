/**
 * Tracing, with an in-memory exporter: a server span per request named `{method} {route}` and carrying OpenTelemetry's
 * HTTP attributes (method, route, path, status, server address and port, user agent) and the request id, continuing
 * the caller's W3C trace; a span per SQL statement inside it; a run's own work (its model call) inside the request's
 * trace.
 */
import { assert, describe, layer } from "@effect/vitest"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { SpanKind } from "@opentelemetry/api"
import { Effect, Layer } from "effect"
import { ServerAddress } from "../../src/server/Listen.js"
import { tracingWith } from "../../src/telemetry/Telemetry.js"
import { rawRequest } from "../support/RawHttp.js"
import { freshKey, oneQuestion, postRun } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerLive, TestServerWithUpstreamLive } from "../support/TestServer.js"

const exporter = new InMemorySpanExporter()
const TracedServer = TestServerLive().pipe(Layer.provide(tracingWith("arbiter-test", new SimpleSpanProcessor(exporter))))
// Its own exporter: the first server's shutdown stops the one it was given.
const runExporter = new InMemorySpanExporter()
const TracedUpstreamServer = TestServerWithUpstreamLive().pipe(
  Layer.provide(tracingWith("arbiter-test", new SimpleSpanProcessor(runExporter)))
)

const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"

/** The request's server span (the router adds an internal span of the same name inside it). */
const serverSpan = (spans: ReadonlyArray<ReadableSpan>) => spans.find((span) => span.kind === SpanKind.SERVER)
const parentSpanId = "00f067aa0ba902b7"

layer(TracedServer, { excludeTestServices: true, timeout: "60 seconds" })("telemetry", (it) => {
  describe("GET /readyz", () => {
    it.effect("one server span continuing traceparent, with route, status and request id, and SQL spans inside", () =>
      Effect.gen(function*() {
        const address = yield* ServerAddress
        exporter.reset()
        const res = yield* rawRequest(address.url, {
          path: "/readyz",
          headers: {
            traceparent: `00-${traceId}-${parentSpanId}-01`,
            "x-request-id": "trace-me-1",
            "user-agent": "probe/1.0"
          }
        })
        assert.strictEqual(res.status, 200)
        yield* Effect.sleep("50 millis")
        const spans = exporter.getFinishedSpans()
        const server = serverSpan(spans)
        assert.isDefined(server, spans.map((span) => span.name).join(", "))
        assert.strictEqual(server!.name, "GET /readyz")
        assert.strictEqual(server!.attributes["url.path"], "/readyz")
        assert.strictEqual(server!.attributes["server.address"], "127.0.0.1")
        assert.strictEqual(server!.attributes["server.port"], Number(new URL(address.url).port))
        assert.strictEqual(server!.attributes["user_agent.original"], "probe/1.0")
        assert.isUndefined(server!.attributes["error.type"])
        assert.strictEqual(server!.spanContext().traceId, traceId)
        assert.strictEqual(server!.parentSpanContext?.spanId, parentSpanId)
        assert.strictEqual(server!.attributes["http.request.method"], "GET")
        assert.strictEqual(server!.attributes["http.response.status_code"], 200)
        assert.strictEqual(server!.attributes["http.route"], "/readyz")
        assert.strictEqual(server!.attributes["http.request_id"], "trace-me-1")
        const statements = spans.filter((span) => span.name === "sql.execute" && span.spanContext().traceId === traceId)
        assert.isAtLeast(statements.length, 2, "the readiness queries are traced inside the request's trace")
        for (const statement of statements) {
          assert.isString(statement.attributes["db.query.text"])
          assert.notMatch(String(statement.attributes["db.query.text"]), /otsk_/)
        }
      }))

    it.effect("a request without traceparent starts its own trace; a 404 is traced with its status", () =>
      Effect.gen(function*() {
        const address = yield* ServerAddress
        exporter.reset()
        const res = yield* rawRequest(address.url, { path: "/nowhere" })
        assert.strictEqual(res.status, 404)
        yield* Effect.sleep("50 millis")
        const server = serverSpan(exporter.getFinishedSpans())
        assert.isDefined(server)
        assert.strictEqual(server!.name, "GET", "a path no route serves is named by its method alone")
        assert.isUndefined(server!.attributes["http.route"])
        assert.notStrictEqual(server!.spanContext().traceId, traceId)
        assert.strictEqual(server!.attributes["http.response.status_code"], 404)
        assert.match(String(server!.attributes["http.request_id"]), /^req_/)
      }))
  })
})

layer(TracedUpstreamServer, { excludeTestServices: true, timeout: "60 seconds" })("telemetry of a run", (it) => {
  describe("POST /v1/runs", () => {
    it.effect("the run's admission, model call and settlement are spans under the request's, which names the organization", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        runExporter.reset()
        const res = yield* postRun(organization.secret, oneQuestion(), freshKey(), {
          headers: { traceparent: `00-${traceId}-${parentSpanId}-01` }
        })
        assert.strictEqual(res.status, 200, res.text)
        yield* Effect.sleep("50 millis")
        const spans = runExporter.getFinishedSpans()
        const server = serverSpan(spans)
        assert.isDefined(server, spans.map((span) => span.name).join(", "))
        assert.strictEqual(server!.name, "POST /v1/runs")
        assert.strictEqual(server!.attributes["http.route"], "/v1/runs")
        assert.strictEqual(server!.attributes["http.request.method"], "POST")
        assert.strictEqual(server!.attributes["arbiter.organization_id"], organization.organizationId)
        const call = spans.find((span) => span.name === "model.call")
        assert.isDefined(call, spans.map((span) => span.name).join(", "))
        assert.strictEqual(call!.spanContext().traceId, traceId)
        assert.isNumber(call!.attributes["model.input_tokens"])
        // The run's work runs in its own fiber: its spans (admission, the call, settlement) still descend from the
        // request's.
        const parentOf = new Map(spans.map((span) => [span.spanContext().spanId, span.parentSpanContext?.spanId]))
        const admit = spans.find((span) => span.name === "run.admit")
        const settle = spans.find((span) => span.name === "run.settle")
        assert.strictEqual(admit?.attributes["arbiter.organization_id"], organization.organizationId)
        assert.strictEqual(settle?.attributes["arbiter.run_id"], res.json().run_id)
        for (const span of [call!, admit!, settle!]) {
          let ancestor = span.parentSpanContext?.spanId
          while (ancestor !== undefined && ancestor !== server!.spanContext().spanId) ancestor = parentOf.get(ancestor)
          assert.strictEqual(ancestor, server!.spanContext().spanId, span.name)
        }
      }))
  })
})
