/**
 * `LOG_FORMAT=json` lines (src/telemetry/JsonLogger.ts): one flat object a line, `time`, `level`, `msg`, then
 * `request_id`, `trace_id`, `span_id` where known and every annotation at the top level (no nested `annotations`),
 * `cause` when the line has one; an annotation never replaces `time`, `level` or `msg`. Then a request's access line
 * as the server writes it.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Logger, References } from "effect"
import { TestConsole } from "effect/testing"
import { AppConfig } from "../../src/config/AppConfig.js"
import { DatabaseLive } from "../../src/db/Sql.js"
import { ServerAddress } from "../../src/server/Listen.js"
import { HttpLive, LoggingLive } from "../../src/Server.js"
import { formatFlatJson } from "../../src/telemetry/JsonLogger.js"
import { rawRequest } from "../support/RawHttp.js"
import { TestClientLive, testConfigLayer } from "../support/TestServer.js"

type Line = Record<string, unknown>

/** A logger that keeps each line as the JSON logger writes it, parsed back. */
const capture = (into: Array<Line>) =>
  Logger.make((options) => {
    const text = formatFlatJson.log(options)
    assert.notInclude(text, "\n", "one line each")
    into.push(JSON.parse(text) as Line)
  })

const logged = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const lines: Array<Line> = []
    yield* effect.pipe(
      Effect.provide(Logger.layer([capture(lines)])),
      Effect.provideService(References.MinimumLogLevel, "Trace")
    )
    return lines
  })

describe("flat JSON lines", () => {
  it.effect("time, level, msg and the annotations at the top level", () =>
    Effect.gen(function*() {
      const [line] = yield* logged(
        Effect.logWarning("settlement", "retrying").pipe(
          Effect.annotateLogs({ run_id: "run_1", attempts: 3, msg: "not mine", level: "not mine" })
        )
      )
      assert.deepStrictEqual(Object.keys(line!).slice(0, 3), ["time", "level", "msg"])
      assert.strictEqual(line!.level, "warn")
      assert.strictEqual(line!.msg, "settlement retrying")
      assert.match(String(line!.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      assert.strictEqual(line!.run_id, "run_1")
      assert.strictEqual(line!.attempts, 3)
      assert.notProperty(line!, "annotations")
      assert.notProperty(line!, "cause")
    }))

  it.effect("levels in lower case, an error's message in msg, and the cause when there is one", () =>
    Effect.gen(function*() {
      const lines = yield* logged(
        Effect.gen(function*() {
          yield* Effect.logDebug("debug line")
          yield* Effect.logInfo("failed:", new Error("boom"))
          yield* Effect.logError("lost").pipe(Effect.andThen(Effect.fail("why")), Effect.tapCause(Effect.logError), Effect.ignore)
        })
      )
      assert.deepStrictEqual(lines.map((line) => line.level), ["debug", "info", "error", "error"])
      assert.strictEqual(lines[1]!.msg, "failed: boom")
      assert.include(String(lines[3]!.cause), "why")
    }))

  it.effect("inside a span: its trace_id and span_id", () =>
    Effect.gen(function*() {
      let ids = { traceId: "", spanId: "" }
      const [line] = yield* logged(
        Effect.gen(function*() {
          const span = yield* Effect.currentSpan
          ids = { traceId: span.traceId, spanId: span.spanId }
          yield* Effect.logInfo("in a span")
        }).pipe(Effect.withSpan("work"))
      )
      assert.match(String(line!.trace_id), /^[0-9a-f]{32}$/)
      assert.strictEqual(line!.trace_id, ids.traceId)
      assert.strictEqual(line!.span_id, ids.spanId)
      const [outside] = yield* logged(Effect.logInfo("no span"))
      assert.notProperty(outside!, "span_id")
      assert.notProperty(outside!, "trace_id")
    }))
})

describe("LOG_FORMAT=json", () => {
  it.effect("the server's logging writes flat JSON lines on the console", () =>
    Effect.gen(function*() {
      yield* Effect.logInfo("hello").pipe(
        Effect.annotateLogs({ run_id: "run_2" }),
        Effect.provide(LoggingLive.pipe(
          Layer.provide(AppConfig.layerWith({ logFormat: "json" })),
          Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({})))
        ))
      )
      const written = (yield* TestConsole.logLines).map((line) => JSON.parse(String(line)) as Line)
      assert.strictEqual(written.length, 1)
      assert.strictEqual(written[0]!.msg, "hello")
      assert.strictEqual(written[0]!.level, "info")
      assert.strictEqual(written[0]!.run_id, "run_2")
      assert.notProperty(written[0]!, "annotations")
    }).pipe(Effect.provide(TestConsole.layer)))
})

describe("LOG_FORMAT=json", () => {
  it.effect("the server's logging writes flat JSON lines on the console", () =>
    Effect.gen(function*() {
      yield* Effect.logInfo("hello").pipe(
        Effect.annotateLogs({ run_id: "run_2" }),
        Effect.provide(LoggingLive.pipe(
          Layer.provide(AppConfig.layerWith({ logFormat: "json" })),
          Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({})))
        ))
      )
      const written = (yield* TestConsole.logLines).map((line) => JSON.parse(String(line)) as Line)
      assert.strictEqual(written.length, 1)
      assert.strictEqual(written[0]!.msg, "hello")
      assert.strictEqual(written[0]!.level, "info")
      assert.strictEqual(written[0]!.run_id, "run_2")
      assert.notProperty(written[0]!, "annotations")
    }).pipe(Effect.provide(TestConsole.layer)))
})

const lines: Array<Line> = []

layer(
  TestClientLive.pipe(
    Layer.provideMerge(HttpLive({ host: "127.0.0.1", port: 0, bootstrap: false })),
    Layer.provideMerge(DatabaseLive),
    Layer.provideMerge(testConfigLayer({ accessLog: true })),
    Layer.provide(Logger.layer([capture(lines)])),
    Layer.provide(Layer.succeed(References.MinimumLogLevel, "Info"))
  ),
  { excludeTestServices: true, timeout: "60 seconds" }
)("a request's access line in JSON", (it) => {
  it.effect("request_id, trace_id and the access fields at the top level", () =>
    Effect.gen(function*() {
      const { url } = yield* ServerAddress
      const response = yield* rawRequest(url, { path: "/healthz", headers: { "x-request-id": "json-line-1" } })
      assert.strictEqual(response.status, 200)
      let line: Line | undefined
      for (let i = 0; i < 500 && line === undefined; i++) {
        line = lines.find((each) => each.request_id === "json-line-1" && each.msg === "request")
        if (line === undefined) yield* Effect.sleep("10 millis")
      }
      assert.isDefined(line)
      assert.strictEqual(line!.level, "info")
      assert.match(String(line!.trace_id), /^[0-9a-f]{32}$/)
      assert.strictEqual(line!.method, "GET")
      assert.strictEqual(line!.route, "/healthz")
      assert.strictEqual(line!.status, 200)
      assert.isNumber(line!.duration_ms)
      assert.notProperty(line!, "annotations")
      assert.deepStrictEqual(Object.keys(line!).slice(0, 5), ["time", "level", "msg", "request_id", "trace_id"])
    }))
})
