/**
 * Structured logs, captured with a test logger: every line written while a request is handled carries `request_id`
 * and `trace_id`; one access line per request at info level (method, route template, status, duration) unless
 * `ACCESS_LOG=false`.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer, Logger, Option, References, Tracer } from "effect"
import { CurrentRequestId } from "../../schema/Errors.js"
import { DatabaseLive } from "../../src/db/Sql.js"
import { ServerAddress } from "../../src/server/Listen.js"
import { HttpLive } from "../../src/Server.js"
import { withRequestContext } from "../../src/telemetry/RequestLogContext.js"
import type { Settings } from "../../src/config/AppConfig.js"
import { FakeUpstream } from "../support/FakeUpstream.js"
import { rawRequest } from "../support/RawHttp.js"
import { oneQuestion, postRun } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { TestClientLive, testConfigLayer } from "../support/TestServer.js"

interface Line {
  readonly level: string
  readonly message: string
  readonly annotations: Readonly<Record<string, unknown>>
}

const capture = (into: Array<Line>) =>
  Logger.make(({ fiber, logLevel, message }) => {
    into.push({
      level: logLevel.toUpperCase(),
      message: Array.isArray(message) ? message.join(" ") : String(message),
      annotations: { ...fiber.getRef(References.CurrentLogAnnotations) }
    })
  })

/** The service with its logs captured at info level. */
const serverLogging = (into: Array<Line>, accessLog: boolean, overrides: Partial<Settings> = {}) =>
  TestClientLive.pipe(
    Layer.provideMerge(HttpLive({ host: "127.0.0.1", port: 0, bootstrap: false })),
    Layer.provideMerge(DatabaseLive),
    Layer.provideMerge(testConfigLayer({ accessLog, ...overrides })),
    Layer.provide(Logger.layer([capture(into)])),
    Layer.provide(Layer.succeed(References.MinimumLogLevel, "Info"))
  )

const accessLines = (lines: ReadonlyArray<Line>, requestId: string) =>
  lines.filter((line) => line.message === "request" && line.annotations["request_id"] === requestId)

const untilLogged = (lines: ReadonlyArray<Line>, requestId: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 50 && accessLines(lines, requestId).length === 0; i++) yield* Effect.sleep("10 millis")
    return accessLines(lines, requestId)
  })

const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"

describe("withRequestContext", () => {
  it.effect("adds request_id and the current span's trace_id to a line written inside a request", () =>
    Effect.gen(function*() {
      const lines: Array<Line> = []
      const span = yield* Effect.gen(function*() {
        yield* Effect.logWarning("database failure")
        return yield* Effect.currentSpan
      }).pipe(
        Effect.withSpan("GET /healthz"),
        Effect.provideService(CurrentRequestId, "req-ctx-1"),
        Effect.provideService(Logger.CurrentLoggers, new Set([withRequestContext(capture(lines))]))
      )
      yield* Effect.logWarning("outside any request").pipe(
        Effect.provideService(Logger.CurrentLoggers, new Set([withRequestContext(capture(lines))]))
      )
      assert.strictEqual(lines[0]!.annotations["request_id"], "req-ctx-1")
      assert.strictEqual(lines[0]!.annotations["trace_id"], span.traceId)
      assert.notProperty(lines[1]!.annotations, "request_id")
      assert.notProperty(lines[1]!.annotations, "trace_id")
      assert.strictEqual(yield* CurrentRequestId, "")
    }))

  it.effect("with tracing off: the caller's traceparent trace id, else one derived from the request id", () =>
    Effect.gen(function*() {
      const lines: Array<Line> = []
      const logIn = (requestId: string, parent?: Tracer.AnySpan) =>
        Effect.logInfo("inside").pipe(
          Effect.withSpan("GET /healthz", parent === undefined ? {} : { parent }),
          Effect.withTracerEnabled(false),
          Effect.provideService(CurrentRequestId, requestId),
          Effect.provideService(Logger.CurrentLoggers, new Set([withRequestContext(capture(lines))]))
        )
      yield* logIn("req_0123456789abcdef0123456789abcdef")
      yield* logIn("my-own-id")
      yield* logIn("my-own-id")
      yield* logIn("req_0123456789abcdef0123456789abcdef", Tracer.externalSpan({ traceId, spanId: "00f067aa0ba902b7" }))
      const ids = lines.map((line) => line.annotations["trace_id"])
      assert.strictEqual(ids[0], "0123456789abcdef0123456789abcdef")
      assert.match(String(ids[1]), /^[0-9a-f]{32}$/)
      assert.strictEqual(ids[2], ids[1], "stable for one request id")
      assert.strictEqual(ids[3], traceId)
    }))
})

const on: Array<Line> = []

layer(serverLogging(on, true), { excludeTestServices: true, timeout: "60 seconds" })("access log on", (it) => {
  it.effect("one info line per request with method, route template, status, duration, request_id and trace_id", () =>
    Effect.gen(function*() {
      const { url } = yield* ServerAddress
      const response = yield* rawRequest(url, { path: "/v1/runs/run_0123456789abcdef0123456789abcdef", headers: { "x-request-id": "log-me-1" } })
      assert.strictEqual(response.status, 401)
      const [line, ...more] = yield* untilLogged(on, "log-me-1")
      assert.deepStrictEqual(more, [])
      assert.strictEqual(line!.level, "INFO")
      assert.strictEqual(line!.annotations["method"], "GET")
      assert.strictEqual(line!.annotations["route"], "/v1/runs/:run_id")
      assert.strictEqual(line!.annotations["status"], 401)
      assert.isNumber(line!.annotations["duration_ms"])
      assert.match(String(line!.annotations["trace_id"]), /^[0-9a-f]{32}$/)
    }))

  it.effect("trace_id is the caller's traceparent trace id; a generated request id is logged as sent with a trace id", () =>
    Effect.gen(function*() {
      const { url } = yield* ServerAddress
      yield* rawRequest(url, { path: "/healthz", headers: { "x-request-id": "log-me-2", traceparent: `00-${traceId}-00f067aa0ba902b7-01` } })
      const [traced] = yield* untilLogged(on, "log-me-2")
      assert.strictEqual(traced!.annotations["trace_id"], traceId)
      const generated = yield* rawRequest(url, { path: "/healthz" })
      const requestId = String(generated.headers["x-request-id"])
      const [line] = yield* untilLogged(on, requestId)
      assert.strictEqual(line!.annotations["route"], "/healthz")
      assert.match(String(line!.annotations["trace_id"]), /^[0-9a-f]{32}$/)
    }))
})

const off: Array<Line> = []

layer(serverLogging(off, false), { excludeTestServices: true, timeout: "60 seconds" })("access log off (ACCESS_LOG=false)", (it) => {
  it.effect("no access line", () =>
    Effect.gen(function*() {
      const { url } = yield* ServerAddress
      assert.strictEqual((yield* rawRequest(url, { path: "/healthz", headers: { "x-request-id": "quiet-1" } })).status, 200)
      yield* Effect.sleep("100 millis")
      assert.deepStrictEqual(off.filter((line) => line.message === "request"), [])
    }))
})

const withUpstream: Array<Line> = []

/** The service answering through a FakeUpstream, its logs captured. */
const upstreamLogging = Layer.unwrap(
  Effect.map(FakeUpstream, (upstream) =>
    serverLogging(withUpstream, true, {
      decisionProvider: "openai",
      decisionProviderUrl: Option.some(upstream.url),
      decisionProviderModel: Option.some("judge-7b"),
      decisionProviderMaxRetries: 2,
      decisionProviderRetryBaseMs: 5
    }))
).pipe(Layer.provideMerge(FakeUpstream.layer))

layer(upstreamLogging, { excludeTestServices: true, timeout: "60 seconds" })("a run's own lines", (it) => {
  it.effect("a line the run's work writes (a failed upstream attempt) carries the request's request_id and trace_id", () =>
    Effect.gen(function*() {
      const upstream = yield* FakeUpstream
      const organization = yield* seedOrganization()
      yield* upstream.script({ kind: "status", status: 503 })
      const response = yield* postRun(organization.secret, oneQuestion(), `log-run-${Date.now()}`, {
        headers: { "x-request-id": "log-run-1", traceparent: `00-${traceId}-00f067aa0ba902b7-01` }
      })
      assert.strictEqual(response.status, 200, response.text)
      const [access] = yield* untilLogged(withUpstream, "log-run-1")
      assert.strictEqual(access!.annotations["trace_id"], traceId)
      const failed = withUpstream.filter((line) => line.message.startsWith("upstream attempt 1 failed"))
      assert.strictEqual(failed.length, 1, JSON.stringify(withUpstream.map((line) => line.message)))
      assert.strictEqual(failed[0]!.level, "INFO")
      assert.strictEqual(failed[0]!.message, "upstream attempt 1 failed (unavailable): status 503")
      assert.strictEqual(failed[0]!.annotations["request_id"], "log-run-1")
      assert.strictEqual(failed[0]!.annotations["trace_id"], traceId)
    }))
})
