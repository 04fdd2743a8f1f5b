/**
 * The boundary, the same for every route, over real HTTP on a random port, through a small API defined for the
 * tests: request ids, 404/405, both rejection styles, body limits (Content-Length and chunked), defects and CORS.
 */
import { assert, describe, layer } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Layer, Logger } from "effect"
import { AppConfig } from "../../src/config/AppConfig.js"
import { boundaryLayer } from "../../src/http/Boundary.js"
import { MaxJsonDepth } from "../../src/http/JsonBody.js"
import { listen, ServerAddress } from "../../src/server/Listen.js"
import { rawRequest, type RawRequest } from "../support/RawHttp.js"
import { BoundaryApi, BoundaryApiLive } from "./fixtures/BoundaryApi.js"

const logged: Array<string> = []
const CapturingLogger = Logger.layer([
  Logger.make(({ message, cause }) => {
    logged.push(`${String(message)} ${String(cause)}`)
  })
])

const TestLive = listen({ host: "127.0.0.1", port: 0 }, BoundaryApiLive).pipe(
  Layer.provide(boundaryLayer(BoundaryApi)),
  Layer.provide(AppConfig.layerWith({ corsAllowedOrigins: ["https://app.example"] })),
  Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({}))),
  Layer.provide(CapturingLogger)
)

const send = (options: RawRequest) => Effect.flatMap(ServerAddress, (address) => rawRequest(address.url, options))
/** Like `send`, but a request left without an answer fails the test within `seconds` instead of hanging it. */
const sendWithin = (options: RawRequest, seconds = 5) =>
  send(options).pipe(
    Effect.timeoutOrElse({
      duration: Duration.seconds(seconds),
      orElse: () =>
        Effect.fail(
          new Error(`no answer within ${seconds} s: ${options.method ?? "GET"} ${options.path} ${JSON.stringify(options.headers)}`)
        )
    })
  )
/** `depth` arrays nested around `leaf` (depth 0 is the leaf itself). */
const nested = (depth: number, leaf = "1") => `${"[".repeat(depth)}${leaf}${"]".repeat(depth)}`
const json = { "content-type": "application/json" }
const MiB = 1024 * 1024
const RequestIdPattern = /^req_[0-9a-f]{32}$/

layer(TestLive, { excludeTestServices: true })("boundary", (it) => {
  describe("x-request-id", () => {
    it.effect("echoes a valid caller value and repeats it in JSON errors", () =>
      Effect.gen(function*() {
        const res = yield* send({ path: "/v1/jobs/x1", headers: { "x-request-id": "my.id-1_A" } })
        assert.strictEqual(res.status, 404)
        assert.strictEqual(res.headers["x-request-id"], "my.id-1_A")
        assert.deepStrictEqual(res.json(), {
          error: { code: "run_not_found", message: "no run x1", request_id: "my.id-1_A" }
        })
      }))

    it.effect("replaces an invalid value with req_ + 32 hex", () =>
      Effect.gen(function*() {
        for (const given of ["bad id!", "x".repeat(129), "é"]) {
          const res = yield* send({ path: "/v1/things", headers: { "x-request-id": given } })
          assert.strictEqual(res.status, 200)
          assert.match(String(res.headers["x-request-id"]), RequestIdPattern)
        }
        const res = yield* send({ path: "/v1/things" })
        assert.match(String(res.headers["x-request-id"]), RequestIdPattern)
      }))

    it.effect("is set on 404, 405, plain-text and 413 responses", () =>
      Effect.gen(function*() {
        const cases: Array<[RawRequest, number]> = [
          [{ path: "/nope" }, 404],
          [{ method: "PUT", path: "/v1/things" }, 405],
          [{ method: "POST", path: "/v1/things", headers: json, body: "{" }, 400],
          [{ method: "POST", path: "/v1/things", body: "{}" }, 415],
          [{ method: "POST", path: "/v1/things", headers: json, body: "{}" }, 422],
          [{ method: "POST", path: "/v1/things", headers: json, body: "x".repeat(MiB + 1) }, 413],
          [{ method: "POST", path: "/v1/jobs", headers: json, body: "x".repeat(4 * MiB + 1) }, 413]
        ]
        for (const [request, status] of cases) {
          const res = yield* send({ ...request, headers: { ...request.headers, "x-request-id": "trace-1" } })
          assert.strictEqual(res.status, status, `${request.method ?? "GET"} ${request.path}`)
          assert.strictEqual(res.headers["x-request-id"], "trace-1")
        }
      }))
  })

  describe("routing", () => {
    it.effect("404 unknown path and 405 wrong method, both with empty bodies", () =>
      Effect.gen(function*() {
        const notFound = yield* send({ path: "/v1/nothing/here" })
        assert.strictEqual(notFound.status, 404)
        assert.strictEqual(notFound.text, "")
        assert.strictEqual(notFound.headers["content-length"], "0")
        const wrongMethod = yield* send({ method: "PATCH", path: "/v1/things/abc" })
        assert.strictEqual(wrongMethod.status, 405)
        assert.strictEqual(wrongMethod.text, "")
      }))

    it.effect("a trailing slash, a doubled slash or another case is not the route", () =>
      Effect.gen(function*() {
        for (const path of ["/v1/things/", "/v1//things", "/V1/THINGS", "/v1/things/abc/"]) {
          const res = yield* send({ path })
          assert.strictEqual(res.status, 404, path)
        }
      }))
  })

  describe("routing, continued", () => {
    it.effect("a long path parameter routes to its handler", () =>
      Effect.gen(function*() {
        for (const length of [101, 513, 600, 10_000]) {
          const id = "r".repeat(length)
          const res = yield* sendWithin({ path: `/v1/jobs/${id}`, headers: { "x-request-id": "long-1" } })
          assert.strictEqual(res.status, 404, `length ${length}`)
          assert.deepStrictEqual(res.json(), { error: { code: "run_not_found", message: `no run ${id}`, request_id: "long-1" } })
          const del = yield* sendWithin({ method: "DELETE", path: `/v1/things/${id}` })
          assert.strictEqual(del.status, 200)
          assert.deepStrictEqual(del.json(), { id })
        }
      }))

    it.effect("HEAD is not served: 405 on a known path, 404 on an unknown one, empty, with the request id", () =>
      Effect.gen(function*() {
        const cases: Array<[string, number]> = [
          ["/v1/things", 405],
          ["/v1/jobs/abc", 405],
          ["/v1/defect", 405],
          ["/nope", 404],
          ["/v1/things/", 404]
        ]
        for (const [path, status] of cases) {
          const res = yield* sendWithin({ method: "HEAD", path, headers: { "x-request-id": "head-1" } })
          assert.strictEqual(res.status, status, path)
          assert.strictEqual(res.text, "")
          assert.strictEqual(res.headers["content-length"], "0")
          assert.strictEqual(res.headers["x-request-id"], "head-1")
        }
        // The access log writes one `request` line per request; any other line would come from the handler.
        const handlerLines = () => logged.filter((line) => !line.startsWith("request ")).length
        const logsBefore = handlerLines()
        yield* sendWithin({ method: "HEAD", path: "/v1/defect" })
        assert.strictEqual(handlerLines(), logsBefore, "the handler did not run")
      }))
  })

  describe("plain-text rejections (keys and billing style)", () => {
    it.effect("400 Failed to parse the request body as JSON, for malformed and empty bodies", () =>
      Effect.gen(function*() {
        for (const body of ["{\"name\":", "not json", ""]) {
          const res = yield* send({ method: "POST", path: "/v1/things", headers: json, body })
          assert.strictEqual(res.status, 400)
          assert.match(String(res.headers["content-type"]), /^text\/plain/)
          assert.isTrue(res.text.startsWith("Failed to parse the request body as JSON"), res.text)
        }
      }))

    it.effect("415 without or with another content type", () =>
      Effect.gen(function*() {
        for (const headers of [{}, { "content-type": "text/plain" }, { "content-type": "application/xml" }]) {
          const res = yield* send({ method: "POST", path: "/v1/things", headers, body: "{\"name\":\"a\",\"count\":1}" })
          assert.strictEqual(res.status, 415)
          assert.match(res.text, /Content-Type: application\/json/)
        }
        const ok = yield* send({
          method: "POST",
          path: "/v1/things",
          headers: { "content-type": "application/json; charset=utf-8" },
          body: "{\"name\":\"a\",\"count\":1}"
        })
        assert.strictEqual(ok.status, 201)
      }))

    it.effect("422 for an unknown field (at any depth), a wrong type or a missing field", () =>
      Effect.gen(function*() {
        const bodies = [
          { name: "a", count: 1, extra: true },
          { name: "a", count: 1, nested: { a: 1, b: 2 } },
          { name: "a", count: "1" },
          { name: "a", count: -1 },
          { count: 1 }
        ]
        for (const body of bodies) {
          const res = yield* send({ method: "POST", path: "/v1/things", headers: json, body: JSON.stringify(body) })
          assert.strictEqual(res.status, 422, JSON.stringify(body))
          assert.isTrue(res.text.startsWith("Failed to deserialize the JSON body into the target type"), res.text)
        }
        const unknown = yield* send({
          method: "POST",
          path: "/v1/things",
          headers: json,
          body: JSON.stringify({ name: "a", count: 1, extra: true })
        })
        assert.include(unknown.text, "extra")
      }))

    it.effect("400 Failed to deserialize query string for unknown or malformed parameters", () =>
      Effect.gen(function*() {
        for (const path of ["/v1/things?foo=1", "/v1/things?limit=abc", "/v1/things?limit=2.5", "/v1/things/x/poke?a=1"]) {
          const res = yield* send({ method: path.endsWith("a=1") ? "POST" : "GET", path })
          assert.strictEqual(res.status, 400, path)
          assert.isTrue(res.text.startsWith("Failed to deserialize query string"), res.text)
        }
        const ok = yield* send({ path: "/v1/things?limit=7" })
        assert.deepStrictEqual(ok.json(), { limit: 7 })
      }))

    it.effect("413 Failed to buffer the request body over 1 MiB, with Content-Length or chunked", () =>
      Effect.gen(function*() {
        const body = JSON.stringify({ name: "x".repeat(MiB), count: 1 })
        for (const chunked of [false, true]) {
          const res = yield* send({ method: "POST", path: "/v1/things", headers: json, body, chunked })
          assert.strictEqual(res.status, 413, `chunked=${chunked}`)
          assert.isTrue(res.text.startsWith("Failed to buffer the request body"), res.text)
          const bodiless = yield* send({ method: "POST", path: "/v1/things/x/poke", body, chunked })
          assert.strictEqual(bodiless.status, 413, `bodiless chunked=${chunked}`)
        }
        const under = yield* send({
          method: "POST",
          path: "/v1/things",
          headers: json,
          body: JSON.stringify({ name: "x".repeat(MiB - 100), count: 1 }),
          chunked: true
        })
        assert.strictEqual(under.status, 201)
      }))

    it.effect("routes without a body need no content type", () =>
      Effect.gen(function*() {
        const res = yield* send({ method: "POST", path: "/v1/things/abc/poke" })
        assert.strictEqual(res.status, 200)
        assert.deepStrictEqual(res.json(), { id: "abc" })
        const del = yield* send({ method: "DELETE", path: "/v1/things/abc" })
        assert.deepStrictEqual(del.json(), { id: "abc" })
      }))
  })

  describe("JSON rejections (runs and router style)", () => {
    const expectInvalidBody = (request: RawRequest) =>
      Effect.gen(function*() {
        const res = yield* send({ ...request, headers: { ...request.headers, "x-request-id": "jb-1" } })
        assert.strictEqual(res.status, 400, `${request.path} ${String(request.body).slice(0, 40)}`)
        const body = res.json()
        assert.strictEqual(body.error.code, "invalid_body")
        assert.strictEqual(body.error.request_id, "jb-1")
        return body.error.message as string
      })

    it.effect("400 invalid_body for malformed JSON, no content type, unknown fields, bad values and queries", () =>
      Effect.gen(function*() {
        yield* expectInvalidBody({ method: "POST", path: "/v1/jobs", headers: json, body: "{" })
        yield* expectInvalidBody({ method: "POST", path: "/v1/jobs", headers: json, body: "" })
        yield* expectInvalidBody({ method: "POST", path: "/v1/jobs", body: "{\"text\":\"a\"}" })
        const unknown = yield* expectInvalidBody({
          method: "POST",
          path: "/v1/jobs",
          headers: json,
          body: "{\"text\":\"a\",\"other\":1}"
        })
        assert.include(unknown, "other")
        const range = yield* expectInvalidBody({
          method: "POST",
          path: "/v1/jobs",
          headers: json,
          body: "{\"text\":\"a\",\"size\":11}"
        })
        assert.include(range, "size")
        yield* expectInvalidBody({ path: "/v1/jobs?limit=1.5" })
        yield* expectInvalidBody({ path: "/v1/jobs?page=2" })
      }))

    it.effect("413 body_too_large over 4 MiB (Content-Length and chunked); 2 MiB is accepted", () =>
      Effect.gen(function*() {
        const big = JSON.stringify({ text: "x".repeat(4 * MiB) })
        for (const chunked of [false, true]) {
          const res = yield* send({ method: "POST", path: "/v1/jobs", headers: json, body: big, chunked })
          assert.strictEqual(res.status, 413)
          assert.strictEqual(res.json().error.code, "body_too_large")
        }
        const ok = yield* send({
          method: "POST",
          path: "/v1/jobs",
          headers: json,
          body: JSON.stringify({ text: "x".repeat(2 * MiB) }),
          chunked: true
        })
        assert.strictEqual(ok.status, 200)
        assert.deepStrictEqual(ok.json(), { bytes: 2 * MiB })
      }))
  })

  describe("JSON content types", () => {
    const JsonTypes = [
      "application/problem+json",
      "application/vnd.foo+json",
      "application/merge-patch+json; charset=utf-8",
      "Application/Vnd.Api+JSON",
      "application/json;charset=UTF-8",
      "APPLICATION/JSON"
    ]

    it.effect("every application/json and application/*+json type is read and decoded like application/json", () =>
      Effect.gen(function*() {
        for (const type of JsonTypes) {
          const headers = { "content-type": type, "x-request-id": "ct-1" }
          const thing = yield* sendWithin({ method: "POST", path: "/v1/things", headers, body: "{\"name\":\"a\",\"count\":1}" })
          assert.strictEqual(thing.status, 201, type)
          assert.deepStrictEqual(thing.json(), { name: "a", count: 1 })
          assert.strictEqual(thing.headers["x-request-id"], "ct-1")
          const unknown = yield* sendWithin({ method: "POST", path: "/v1/things", headers, body: "{\"name\":\"a\",\"count\":1,\"x\":1}" })
          assert.strictEqual(unknown.status, 422, type)
          assert.isTrue(unknown.text.startsWith("Failed to deserialize the JSON body into the target type"), unknown.text)
          const malformed = yield* sendWithin({ method: "POST", path: "/v1/things", headers, body: "{\"name\":" })
          assert.strictEqual(malformed.status, 400, type)
          assert.isTrue(malformed.text.startsWith("Failed to parse the request body as JSON"), malformed.text)
          const job = yield* sendWithin({ method: "POST", path: "/v1/jobs", headers, body: "{\"text\":\"abc\"}" })
          assert.strictEqual(job.status, 200, type)
          assert.deepStrictEqual(job.json(), { bytes: 3 })
          const badJob = yield* sendWithin({ method: "POST", path: "/v1/jobs", headers, body: "{\"text\":1}" })
          assert.strictEqual(badJob.status, 400, type)
          assert.strictEqual(badJob.json().error.code, "invalid_body")
        }
      }))

    it.effect("no content type leaves a request unanswered: each is decoded or refused, with its request id", () =>
      Effect.gen(function*() {
        const refused = [
          "text/plain",
          "text/json",
          "application/xml",
          "application/octet-stream",
          "application/x-www-form-urlencoded",
          "multipart/form-data; boundary=xyz",
          "application/json-seq",
          "application/jsonx",
          "application/+json",
          "application/json, text/plain",
          "image/svg+json",
          "*/*",
          ""
        ]
        for (const type of refused) {
          for (const chunked of [false, true]) {
            const headers = { "content-type": type, "x-request-id": "odd-1" }
            const thing = yield* sendWithin({ method: "POST", path: "/v1/things", headers, body: "{\"name\":\"a\",\"count\":1}", chunked })
            assert.strictEqual(thing.status, 415, `things ${type}`)
            assert.strictEqual(thing.headers["x-request-id"], "odd-1")
            const job = yield* sendWithin({ method: "POST", path: "/v1/jobs", headers, body: "{\"text\":\"abc\"}", chunked })
            assert.strictEqual(job.status, 400, `jobs ${type}`)
            assert.strictEqual(job.json().error.code, "invalid_body")
            assert.strictEqual(job.headers["x-request-id"], "odd-1")
          }
        }
        for (const type of ["application/problem+json", "application/xml", "text/plain"]) {
          const list = yield* sendWithin({ path: "/v1/things", headers: { "content-type": type }, body: "<a/>" })
          assert.strictEqual(list.status, 200, `GET with ${type}`)
          const poke = yield* sendWithin({ method: "POST", path: "/v1/things/x/poke", headers: { "content-type": type }, body: "<a/>" })
          assert.strictEqual(poke.status, 200, `bodiless POST with ${type}`)
        }
      }))
  })

  describe("nesting limit", () => {
    const job = (data: string) => `{"text":"a","data":${data}}`

    it.effect(`a body nested up to ${MaxJsonDepth} levels is decoded; deeper is refused like a schema mismatch`, () =>
      Effect.gen(function*() {
        // The body's own object is level 1, so `data` may nest MaxJsonDepth - 1 levels.
        const atLimit = yield* sendWithin({ method: "POST", path: "/v1/jobs", headers: json, body: job(nested(MaxJsonDepth - 1)) })
        assert.strictEqual(atLimit.status, 200, atLimit.text.slice(0, 200))
        for (const depth of [MaxJsonDepth, 3_000, 100_000]) {
          const res = yield* sendWithin({ method: "POST", path: "/v1/jobs", headers: { ...json, "x-request-id": "deep-1" }, body: job(nested(depth)) })
          assert.strictEqual(res.status, 400, `depth ${depth}`)
          assert.deepStrictEqual(res.json(), {
            error: {
              code: "invalid_body",
              message: `invalid request body: "data" nests deeper than ${MaxJsonDepth} levels of arrays and objects`,
              request_id: "deep-1"
            }
          })
        }
        const objects = yield* sendWithin({
          method: "POST",
          path: "/v1/jobs",
          headers: json,
          body: job(`${"{\"a\":".repeat(5_000)}1${"}".repeat(5_000)}`)
        })
        assert.strictEqual(objects.status, 400)
        assert.strictEqual(objects.json().error.code, "invalid_body")
        const topLevel = yield* sendWithin({ method: "POST", path: "/v1/jobs", headers: json, body: nested(5_000) })
        assert.strictEqual(topLevel.status, 400)
        assert.include(topLevel.json().error.message, "the body nests deeper")
      }))

    it.effect("on a plain-text route a too-deep body is the 422, a malformed one still the 400, never a 500", () =>
      Effect.gen(function*() {
        for (const depth of [MaxJsonDepth + 1, 3_000, 100_000]) {
          const res = yield* sendWithin({
            method: "POST",
            path: "/v1/things",
            headers: json,
            body: `{"name":${nested(depth, "\"x\"")},"count":1}`
          })
          assert.strictEqual(res.status, 422, `depth ${depth}`)
          assert.match(String(res.headers["content-type"]), /^text\/plain/)
          assert.strictEqual(
            res.text,
            `Failed to deserialize the JSON body into the target type: "name" nests deeper than ${MaxJsonDepth} levels of arrays and objects`
          )
        }
        const shallow = yield* sendWithin({ method: "POST", path: "/v1/things", headers: json, body: `{"name":${nested(10)},"count":1}` })
        assert.strictEqual(shallow.status, 422)
        const malformed = yield* sendWithin({ method: "POST", path: "/v1/things", headers: json, body: `{"name":${nested(3_000)}` })
        assert.strictEqual(malformed.status, 400)
        assert.isTrue(malformed.text.startsWith("Failed to parse the request body as JSON"), malformed.text)
      }))
  })

  describe("413 on routes without a body", () => {
    it.effect("a JSON-style route without a body answers the plain-text 413, Content-Length or chunked", () =>
      Effect.gen(function*() {
        const body = "x".repeat(MiB + 1)
        for (const path of ["/v1/jobs", "/v1/jobs/abc", "/v1/things"]) {
          for (const chunked of [false, true]) {
            // Node's client chunks a GET body only when told to.
            const framing: Record<string, string> = chunked ? { "transfer-encoding": "chunked" } : {}
            const res = yield* sendWithin({ path, headers: { ...json, ...framing, "x-request-id": "big-1" }, body, chunked })
            assert.strictEqual(res.status, 413, `${path} chunked=${chunked}`)
            assert.match(String(res.headers["content-type"]), /^text\/plain/)
            assert.strictEqual(res.text, "Failed to buffer the request body: length limit exceeded")
            assert.strictEqual(res.headers["x-request-id"], "big-1")
          }
        }
        const large = yield* sendWithin({ method: "POST", path: "/v1/jobs", headers: json, body: "x".repeat(4 * MiB + 1) })
        assert.strictEqual(large.status, 413)
        assert.strictEqual(large.json().error.code, "body_too_large")
      }))
  })

  describe("failures", () => {
    it.effect("a defect answers 500 internal_error with the request id, logged, nothing leaked", () =>
      Effect.gen(function*() {
        const res = yield* send({ path: "/v1/defect", headers: { "x-request-id": "boom-1" } })
        assert.strictEqual(res.status, 500)
        assert.deepStrictEqual(res.json(), {
          error: { code: "internal_error", message: "internal error", request_id: "boom-1" }
        })
        assert.notInclude(res.text, "hunter2")
        assert.isTrue(logged.some((line) => line.includes("hunter2")), "the cause is logged")
      }))

    it.effect("a database failure answers 503 database_unavailable", () =>
      Effect.gen(function*() {
        const res = yield* send({ path: "/v1/sql" })
        assert.strictEqual(res.status, 503)
        assert.strictEqual(res.json().error.code, "database_unavailable")
        assert.notInclude(res.text, "connection refused")
      }))
  })

  describe("CORS", () => {
    it.effect("an allowed origin gets the headers; a preflight gets methods, headers and max-age 600", () =>
      Effect.gen(function*() {
        const res = yield* send({ path: "/v1/things", headers: { origin: "https://app.example" } })
        assert.strictEqual(res.headers["access-control-allow-origin"], "https://app.example")
        assert.strictEqual(res.headers["access-control-expose-headers"], "x-request-id")
        assert.isUndefined(res.headers["access-control-allow-credentials"])
        const preflight = yield* send({
          method: "OPTIONS",
          path: "/v1/things",
          headers: {
            origin: "https://app.example",
            "access-control-request-method": "POST",
            "access-control-request-headers": "authorization, idempotency-key"
          }
        })
        assert.strictEqual(preflight.status, 204)
        assert.strictEqual(preflight.headers["access-control-allow-origin"], "https://app.example")
        assert.strictEqual(preflight.headers["access-control-allow-methods"], "GET, POST, PUT, PATCH, DELETE, OPTIONS")
        assert.strictEqual(
          preflight.headers["access-control-allow-headers"],
          "authorization, content-type, idempotency-key, x-request-id"
        )
        assert.strictEqual(preflight.headers["access-control-max-age"], "600")
        assert.isUndefined(preflight.headers["access-control-allow-credentials"])
        assert.match(String(preflight.headers["x-request-id"]), RequestIdPattern)
      }))

    it.effect("an allowed-origin preflight to an unknown path is the unknown path's empty 404", () =>
      Effect.gen(function*() {
        for (const path of ["/nonexistent", "/v1/nothing/here", "/v1/things/", "/v1//things"]) {
          const res = yield* sendWithin({
            method: "OPTIONS",
            path,
            headers: {
              origin: "https://app.example",
              "access-control-request-method": "GET",
              "x-request-id": "pf-1"
            }
          })
          assert.strictEqual(res.status, 404, path)
          assert.strictEqual(res.text, "")
          assert.strictEqual(res.headers["content-length"], "0")
          assert.strictEqual(res.headers["x-request-id"], "pf-1")
          assert.isUndefined(res.headers["access-control-allow-methods"], path)
        }
        for (const path of ["/v1/things", "/v1/jobs/some-id", "/v1/defect"]) {
          const res = yield* sendWithin({
            method: "OPTIONS",
            path,
            headers: { origin: "https://app.example", "access-control-request-method": "DELETE" }
          })
          assert.strictEqual(res.status, 204, path)
          assert.strictEqual(res.headers["access-control-allow-origin"], "https://app.example")
        }
      }))

    it.effect("another origin gets nothing, and its preflight is not answered as CORS", () =>
      Effect.gen(function*() {
        for (const origin of ["https://evil.example", "https://app.example.evil", "null"]) {
          const res = yield* send({ path: "/v1/things", headers: { origin } })
          assert.strictEqual(res.status, 200)
          assert.isUndefined(res.headers["access-control-allow-origin"])
          const preflight = yield* send({
            method: "OPTIONS",
            path: "/v1/things",
            headers: { origin, "access-control-request-method": "POST" }
          })
          assert.strictEqual(preflight.status, 405)
          assert.isUndefined(preflight.headers["access-control-allow-origin"])
        }
      }))
  })
})
