/**
 * `POST /v1/runs` answers alike whichever way it is served: by the direct route (src/server/CreateRunRoute.ts, taken
 * while spans are not exported) or by the runs group's HttpApi handler (src/runs/RunsHttp.ts, with spans kept and
 * exported). The test's server runs with tracing off and serves the route directly, counting each request it takes; a
 * second server over the same database keeps and exports spans through a tracer that records their names, so the API
 * serves it there. Every case goes to both, each with its own credentials and idempotency keys, and the answers must
 * match: status, header names, content type, CORS, `Retry-After`, the `Server-Timing` parts, and the body with ids and
 * times blanked. The cases cover a run, its replay, and a failure of each stage: credential, content type, JSON,
 * decoding, text PostgreSQL cannot store, size, scope, idempotency key, conflict, credit and the key's rate limit.
 * With spans kept, a run is traced as the request's span with the run's parts (admission, the model's call,
 * settlement) under it.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Exit, Layer, Option, References, Schema, Tracer } from "effect"
import { HttpApi } from "effect/http-api"
import fc from "fast-check"
import { Api } from "../../schema/Api.js"
import { DirectRoutes } from "../../src/server/DirectRoutes.js"
import { ServerAddress } from "../../src/server/Listen.js"
import { CreateRunRouteLive } from "../../src/server/CreateRunRoute.js"
import { rawRequest, type RawResponse } from "../support/RawHttp.js"
import { oneQuestion } from "../support/Runs.js"
import { startSecondServerWith } from "../support/SecondServer.js"
import { seedKey, seedOrganization } from "../support/Seed.js"
import { TestServerWithUpstreamLive } from "../support/TestServer.js"

let taken = 0

/** CreateRunRouteLive's routes, each counting the requests it takes. */
const CountedRoutes = Layer.effect(
  DirectRoutes,
  Effect.map(DirectRoutes, (routes) =>
    routes.map((route) => ({
      ...route,
      make: (server: Parameters<typeof route.make>[0]) => {
        const serve = route.make(server)
        return (...args: Parameters<typeof serve>) => {
          taken += 1
          serve(...args)
        }
      }
    })))
).pipe(Layer.provide(CreateRunRouteLive))

/** The spans the second server made: name and parent's name, in the order they ended. */
const ended: Array<{ readonly name: string; readonly parent: string | undefined }> = []

/** A tracer keeping every span, recording each as it ends. */
const RecordingTracer = Layer.succeed(
  Tracer.Tracer,
  Tracer.make({
    span: (options) => {
      const span = new Tracer.NativeSpan(options)
      const end = span.end.bind(span)
      span.end = (endTime, exit) => {
        end(endTime, exit)
        const parent = Option.getOrUndefined(options.parent)
        ended.push({ name: options.name, parent: parent?._tag === "Span" ? parent.name : undefined })
      }
      return span
    }
  })
)

const Origin = "https://console.example.com"

/** What must be the same either way (the caller's tag, in idempotency keys, blanked). */
const comparable = (response: RawResponse, tag: string) => {
  const headers = Object.keys(response.headers).filter((name) => name !== "date").sort()
  const timing = response.headers["server-timing"]
  let body: unknown = response.text
  try {
    body = JSON.parse(response.text.replaceAll(tag, "TAG").replace(/run_[0-9a-f]{32}/g, "run_").replace(/"(created_at|settled_at)":"[^"]+"/g, "\"$1\":\"\""))
  } catch {
    // a plain-text body is compared as it is
  }
  const requestId = String(response.headers["x-request-id"])
  return {
    status: response.status,
    headers,
    contentType: response.headers["content-type"],
    cors: [response.headers["access-control-allow-origin"], response.headers["access-control-expose-headers"], response.headers["vary"]],
    retryAfter: response.headers["retry-after"] === undefined ? "none" : /^[1-9][0-9]*$/.test(String(response.headers["retry-after"])),
    timing: typeof timing === "string" ? timing.replace(/dur=[0-9.]+/g, "dur=") : "none",
    requestId: requestId.startsWith("req_") ? "generated" : requestId,
    body: JSON.stringify(body).replace(/"request_id":"req_[0-9a-f]{32}"/, "\"request_id\":\"generated\"")
  }
}

interface Caller {
  readonly secret: string
  readonly reader: string
  readonly broke: string
  readonly limited: string
  readonly tag: string
}

const post = (url: string, secret: string | undefined, body: string | undefined, headers: Record<string, string> = {}) =>
  rawRequest(url, {
    method: "POST",
    path: "/v1/runs",
    headers: {
      ...(secret === undefined ? {} : { authorization: `Bearer ${secret}` }),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      origin: Origin,
      ...headers
    },
    ...(body === undefined ? {} : { body })
  })

const run = JSON.stringify(oneQuestion())

/** Each case: the answer it compares, sent to one server with that server's caller. */
const cases: ReadonlyArray<readonly [string, (url: string, caller: Caller) => Effect.Effect<RawResponse, Error>]> = [
  ["a run", (url, c) => post(url, c.secret, run, { "idempotency-key": `${c.tag}-run`, "x-request-id": "given.id-1" })],
  ["its replay", (url, c) =>
    Effect.andThen(
      post(url, c.secret, run, { "idempotency-key": `${c.tag}-replayed` }),
      post(url, c.secret, run, { "idempotency-key": `${c.tag}-replayed` })
    )],
  ["no credential", (url) => post(url, undefined, run, { "idempotency-key": "k" })],
  ["a wrong credential", (url) => post(url, "ak_not_a_key", run, { "idempotency-key": "k" })],
  ["a text body", (url, c) => post(url, c.secret, run, { "idempotency-key": "k", "content-type": "text/plain" })],
  ["malformed JSON", (url, c) => post(url, c.secret, "{\"kind\":", { "idempotency-key": "k" })],
  ["an unknown field", (url, c) => post(url, c.secret, JSON.stringify(oneQuestion({ extra: 1 })), { "idempotency-key": "k" })],
  ["a lone surrogate", (url, c) => post(url, c.secret, JSON.stringify(oneQuestion({ state: "a\ud800b" })), { "idempotency-key": "k" })],
  ["a declared 5 MiB body", (url, c) => post(url, c.secret, "x".repeat(5 * 1024 * 1024), { "idempotency-key": "k" })],
  ["a key without runs_write", (url, c) => post(url, c.reader, run, { "idempotency-key": "k" })],
  ["no idempotency key", (url, c) => post(url, c.secret, run)],
  ["a bad idempotency key", (url, c) => post(url, c.secret, run, { "idempotency-key": "with space" })],
  ["a bad question set", (url, c) =>
    post(url, c.secret, JSON.stringify({ kind: "decision", state: "s", questions: {} }), { "idempotency-key": `${c.tag}-q` })],
  ["a conflicting reuse of a key", (url, c) =>
    Effect.andThen(
      post(url, c.secret, run, { "idempotency-key": `${c.tag}-conflict` }),
      post(url, c.secret, JSON.stringify(oneQuestion({ state: "another" })), { "idempotency-key": `${c.tag}-conflict` })
    )],
  ["no credit", (url, c) => post(url, c.broke, run, { "idempotency-key": `${c.tag}-broke`, "x-request-id": "bad id with spaces" })],
  ["a key over its rate", (url, c) =>
    Effect.andThen(
      post(url, c.limited, run, { "idempotency-key": `${c.tag}-rate-1` }),
      post(url, c.limited, run, { "idempotency-key": `${c.tag}-rate-2` })
    )]
]

/** A caller of its own per server, so neither's keys and limits touch the other's. */
const newCaller = (tag: string) =>
  Effect.gen(function*() {
    const organization = yield* seedOrganization()
    const reader = yield* seedKey(organization.organizationId, organization.ownerId, ["runs_read"])
    const broke = yield* seedOrganization({ billing: true })
    const created = yield* Effect.flatMap(ServerAddress, (address) =>
      rawRequest(address.url, {
        method: "POST",
        path: "/v1/keys",
        headers: { authorization: `Bearer ${organization.secret}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "limited", scopes: ["runs_write"], limits: { runs_per_minute: 1 } })
      }))
    assert.strictEqual(created.status, 201, created.text)
    return { secret: organization.secret, reader: reader.secret, broke: broke.secret, limited: created.json().secret, tag } satisfies Caller
  })

layer(
  TestServerWithUpstreamLive({ corsAllowedOrigins: [Origin] }, { directRoutes: CountedRoutes }).pipe(
    Layer.provide(Layer.succeed(References.TracerEnabled, false))
  ),
  { excludeTestServices: true, timeout: "120 seconds" }
)("POST /v1/runs with spans on and off", (it) => {
  describe("answers alike served directly (spans off) and through the API (spans kept)", () => {
    it.effect("every case, sent to both servers, reads the same", () =>
      Effect.gen(function*() {
        const off = (yield* ServerAddress).url
        const on = yield* startSecondServerWith({ extra: Layer.merge(RecordingTracer, Layer.succeed(References.TracerEnabled, true)) })
        for (const [index, [name, send]] of cases.entries()) {
          const before = taken
          const offCaller = yield* newCaller(`d${index}-${Date.now()}`)
          const spansOff = yield* send(off, offCaller)
          assert.isAbove(taken, before, `${name}: the direct route took it`)
          const takenNow = taken
          const onCaller = yield* newCaller(`r${index}-${Date.now()}`)
          const spansOn = yield* send(on, onCaller)
          assert.strictEqual(taken, takenNow, `${name}: the API served it on the server exporting spans`)
          assert.deepStrictEqual(comparable(spansOff, offCaller.tag), comparable(spansOn, onCaller.tag), name)
        }
      }))

    it.effect("with spans kept, a run's parts are spans under the request's", () =>
      Effect.gen(function*() {
        const on = yield* startSecondServerWith({ extra: Layer.merge(RecordingTracer, Layer.succeed(References.TracerEnabled, true)) })
        const caller = yield* newCaller(`s-${Date.now()}`)
        ended.length = 0
        const response = yield* post(on, caller.secret, run, { "idempotency-key": `${caller.tag}-s` })
        assert.strictEqual(response.status, 200, response.text)
        const parentOf = (name: string) => ended.find((span) => span.name === name)?.parent
        assert.strictEqual(parentOf("run.admit"), "POST /v1/runs")
        assert.strictEqual(parentOf("run.settle"), "POST /v1/runs")
        assert.isDefined(ended.find((span) => span.name === "model.call"), "the model's call has its span")
        assert.isDefined(ended.find((span) => span.name === "POST /v1/runs"), "the request has its span")
      }))

    it.effect("a run's answer carries the body's headers, CORS, the request id and every Server-Timing part", () =>
      Effect.gen(function*() {
        const caller = yield* newCaller(`h-${Date.now()}`)
        const response = yield* post((yield* ServerAddress).url, caller.secret, run, { "idempotency-key": `${caller.tag}-h` })
        assert.strictEqual(response.status, 200, response.text)
        assert.strictEqual(response.headers["content-type"], "application/json")
        assert.strictEqual(Number(response.headers["content-length"]), Buffer.byteLength(response.text))
        assert.strictEqual(response.headers["access-control-allow-origin"], Origin)
        assert.match(String(response.headers["x-request-id"]), /^req_[0-9a-f]{32}$/)
        assert.match(String(response.headers["server-timing"]), /^admit;dur=[0-9.]+, upstream;dur=[0-9.]+, gateway;dur=[0-9.]+, total;dur=[0-9.]+, settle;dur=[0-9.]+$/)
        assert.strictEqual(response.json().state, "completed")
      }))

    it.effect("a query string goes through the router, which refuses it as the contract says", () =>
      Effect.gen(function*() {
        const before = taken
        const caller = yield* newCaller(`q-${Date.now()}`)
        const response = yield* rawRequest((yield* ServerAddress).url, {
          method: "POST",
          path: "/v1/runs?debug=1",
          headers: { authorization: `Bearer ${caller.secret}`, "content-type": "application/json", "idempotency-key": "q" },
          body: run
        })
        assert.strictEqual(taken, before)
        assert.strictEqual(response.status, 400, response.text)
        assert.strictEqual(response.json().error.code, "invalid_body")
      }))
  })
})

describe("the endpoint's request shape", () => {
  // The handler reads the idempotency key itself (Runs.ts, `checkIdempotencyKey`): the endpoint's headers schema
  // refuses no request and its path takes no parameters, so the direct route, which decodes the payload and the
  // headers Node hands over (RouteTable.decodeInput), refuses what HttpApi refuses.
  it("POST /v1/runs: no path parameters, and a headers schema that decodes any headers Node hands over", () => {
    let found: { readonly headers: Schema.Top | undefined; readonly path: Schema.Top | undefined } | undefined
    HttpApi.reflect(Api, {
      onGroup: () => {},
      onEndpoint: ({ endpoint }) => {
        if (endpoint.method === "POST" && endpoint.path === "/v1/runs") {
          found = { headers: endpoint.headers, path: endpoint.params }
        }
      }
    })
    assert.isDefined(found)
    assert.isUndefined(found!.path)
    assert.isDefined(found!.headers)
    const decode = Schema.decodeUnknownExit(found!.headers as Schema.Codec<unknown, unknown>)
    const header = fc.string({ minLength: 1, maxLength: 20 }).map((name) => name.toLowerCase())
    const value = fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.constant(""))
    fc.assert(fc.property(
      fc.dictionary(header, value),
      fc.option(value, { nil: undefined }),
      (headers, key) => {
        const given = key === undefined ? headers : { ...headers, "idempotency-key": key }
        return Exit.isSuccess(decode(given))
      }
    ))
  })
})
