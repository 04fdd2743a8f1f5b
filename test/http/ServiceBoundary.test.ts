/**
 * The boundary on the service's own routes, over real HTTP on a random port: JSON content types other than
 * `application/json` on every route with a body (each answered, never left waiting), the nesting limit of JSON bodies,
 * the plain-text 413 on the runs and router GET routes, long path parameters, preflights to unknown paths and HEAD.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { MaxJsonDepth } from "../../src/http/JsonBody.js"
import { ServerAddress } from "../../src/server/Listen.js"
import { call, codeOf, type CallOptions } from "../support/Api.js"
import { rawRequest } from "../support/RawHttp.js"
import { freshKey, oneQuestion } from "../support/Runs.js"
import { seedKey, seedOrganization } from "../support/Seed.js"
import { TestServerLive } from "../support/TestServer.js"

const MiB = 1024 * 1024
const Origin = "https://app.example"

/** A call that fails the test within `seconds` when no answer comes, instead of hanging it. */
const callWithin = (method: string, path: string, options: CallOptions = {}, seconds = 10) =>
  call(method, path, options).pipe(
    Effect.timeoutOrElse({
      duration: Duration.seconds(seconds),
      orElse: () => Effect.fail(new Error(`no answer within ${seconds} s: ${method} ${path} ${JSON.stringify(options.headers)}`))
    })
  )

/** `depth` arrays nested around a JSON leaf. */
const nested = (depth: number, leaf = "1") => `${"[".repeat(depth)}${leaf}${"]".repeat(depth)}`
/** `depth` objects `{"not": ...}` nested around `{}` (a JSON Schema `depth` levels deep). */
const nestedSchema = (depth: number) => `${"{\"not\":".repeat(depth - 1)}{}${"}".repeat(depth - 1)}`

/** Every route with a body, with a valid body, the style it refuses bodies in and the status of success. */
interface BodyRoute {
  readonly method: string
  readonly path: string
  readonly body: () => string
  readonly headers?: () => Record<string, string>
  readonly style: "json" | "plain"
  readonly ok: number
}

const BodyRoutes: ReadonlyArray<BodyRoute> = [
  {
    method: "POST",
    path: "/v1/runs",
    body: () => JSON.stringify(oneQuestion()),
    headers: () => ({ "idempotency-key": freshKey() }),
    style: "json",
    ok: 200
  },
  {
    method: "POST",
    path: "/v1/router/select",
    body: () => JSON.stringify({ prompt: "Write a Python function that parses ISO 8601 dates." }),
    style: "json",
    ok: 200
  },
  {
    method: "POST",
    path: "/v1/keys",
    body: () => JSON.stringify({ name: "ci", scopes: ["runs_read"] }),
    style: "plain",
    ok: 201
  },
  {
    method: "POST",
    path: "/v1/billing/checkout",
    body: () => JSON.stringify({ amount_micros: 25_000_000 }),
    style: "plain",
    ok: 200
  },
  {
    method: "PUT",
    path: "/v1/billing/auto-recharge",
    body: () => JSON.stringify({ enabled: false, threshold_micros: 1_000_000, amount_micros: 10_000_000 }),
    style: "plain",
    ok: 200
  }
]

const label = (route: BodyRoute, type: string) => `${route.method} ${route.path} (${type})`

layer(TestServerLive({ corsAllowedOrigins: [Origin] }), { excludeTestServices: true, timeout: "120 seconds" })(
  "the boundary on the service's routes",
  (it) => {
    const seeded = Effect.gen(function*() {
      const organization = yield* seedOrganization()
      // A key that holds none of the body routes' scopes.
      const reader = yield* seedKey(organization.organizationId, organization.ownerId, ["usage_read"], "reader")
      return { owner: organization.secret, reader: reader.secret }
    })

    describe("application/*+json bodies", () => {
      const JsonTypes = ["application/problem+json", "application/vnd.foo+json", "application/merge-patch+json; charset=utf-8"]

      it.effect("are decoded and answered like application/json on every route with a body", () =>
        Effect.gen(function*() {
          const { owner } = yield* seeded
          for (const route of BodyRoutes) {
            for (const type of JsonTypes) {
              const res = yield* callWithin(route.method, route.path, {
                secret: owner,
                rawBody: route.body(),
                headers: { ...route.headers?.(), "content-type": type, "x-request-id": "pj-1" }
              })
              assert.strictEqual(res.status, route.ok, `${label(route, type)}: ${res.text.slice(0, 300)}`)
              assert.strictEqual(res.headers["x-request-id"], "pj-1")
            }
          }
        }))

      it.effect("reach the scope check: a key without the route's scope is 403 scope_denied", () =>
        Effect.gen(function*() {
          const { reader } = yield* seeded
          for (const route of BodyRoutes) {
            for (const type of JsonTypes) {
              const res = yield* callWithin(route.method, route.path, {
                secret: reader,
                rawBody: route.body(),
                headers: { ...route.headers?.(), "content-type": type }
              })
              assert.strictEqual(res.status, 403, label(route, type))
              assert.strictEqual(codeOf(res), "scope_denied", label(route, type))
            }
          }
        }))

      it.effect("are refused like application/json when the body is wrong", () =>
        Effect.gen(function*() {
          const { owner } = yield* seeded
          for (const route of BodyRoutes) {
            const headers = { ...route.headers?.(), "content-type": "application/problem+json" }
            const unknown = yield* callWithin(route.method, route.path, {
              secret: owner,
              rawBody: JSON.stringify({ ...JSON.parse(route.body()), surplus: 1 }),
              headers
            })
            const malformed = yield* callWithin(route.method, route.path, { secret: owner, rawBody: "{", headers })
            if (route.style === "json") {
              assert.strictEqual(unknown.status, 400, label(route, "unknown field"))
              assert.strictEqual(codeOf(unknown), "invalid_body")
              assert.strictEqual(malformed.status, 400, label(route, "malformed"))
              assert.strictEqual(codeOf(malformed), "invalid_body")
            } else {
              assert.strictEqual(unknown.status, 422, label(route, "unknown field"))
              assert.isTrue(unknown.text.startsWith("Failed to deserialize the JSON body into the target type"), unknown.text)
              assert.strictEqual(malformed.status, 400, label(route, "malformed"))
              assert.isTrue(malformed.text.startsWith("Failed to parse the request body as JSON"), malformed.text)
            }
          }
        }))
    })

    describe("any other content type", () => {
      it.effect("is answered at once with the route's refusal and the request id, with or without the scope", () =>
        Effect.gen(function*() {
          const { owner, reader } = yield* seeded
          const types = [
            "text/plain",
            "application/xml",
            "application/octet-stream",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=xyz",
            "application/json-seq",
            "application/+json",
            ""
          ]
          for (const route of BodyRoutes) {
            for (const type of types) {
              for (const secret of [owner, reader]) {
                const res = yield* callWithin(route.method, route.path, {
                  secret,
                  rawBody: route.body(),
                  headers: { ...route.headers?.(), "content-type": type, "x-request-id": "ct-2" }
                }, 5)
                assert.strictEqual(res.headers["x-request-id"], "ct-2", label(route, type))
                if (route.style === "json") {
                  assert.strictEqual(res.status, 400, label(route, type))
                  assert.strictEqual(codeOf(res), "invalid_body", label(route, type))
                } else {
                  assert.strictEqual(res.status, 415, label(route, type))
                  assert.include(res.text, "Content-Type: application/json")
                }
              }
            }
          }
        }))
    })

    describe(`JSON nested deeper than ${MaxJsonDepth} levels`, () => {
      it.effect("POST /v1/runs: a state at the limit runs; deeper, on any route, is invalid_body, never a 500", () =>
        Effect.gen(function*() {
          const { owner, reader } = yield* seeded
          const run = (state: string, secret = owner) =>
            callWithin("POST", "/v1/runs", {
              secret,
              rawBody: `{"kind":"decision","state":{"s":${state}},` +
                `"questions":{"q":{"type":"noul","instructions":"Is it nested?"}}}`,
              headers: { "idempotency-key": freshKey(), "content-type": "application/json" }
            })
          // The body is level 1 and `state` level 2, so `s` may nest MaxJsonDepth - 2 arrays.
          const atLimit = yield* run(nested(MaxJsonDepth - 2))
          assert.strictEqual(atLimit.status, 200, atLimit.text.slice(0, 300))
          assert.strictEqual(atLimit.json().state, "completed")
          for (const depth of [MaxJsonDepth - 1, 3_000, 200_000]) {
            const res = yield* run(nested(depth))
            assert.strictEqual(res.status, 400, `depth ${depth}: ${res.text.slice(0, 300)}`)
            assert.strictEqual(codeOf(res), "invalid_body")
            assert.include(res.json().error.message, `"state" nests deeper than ${MaxJsonDepth} levels`)
          }
          // The scope is checked from the headers before the body is read (decisions.md, Precise rules, "Slow clients").
          const unscoped = yield* run(nested(3_000), reader)
          assert.strictEqual(codeOf(unscoped), "scope_denied", "the scope is checked before the body is read")
        }))

      it.effect("a verdict schema deeper than 32 levels is invalid_verdict_schema; past the body limit invalid_body", () =>
        Effect.gen(function*() {
          const { owner } = yield* seeded
          const verdict = (depth: number) =>
            callWithin("POST", "/v1/runs", {
              secret: owner,
              rawBody: `{"kind":"verdict","state":"x","schema":${nestedSchema(depth)}}`,
              headers: { "idempotency-key": freshKey(), "content-type": "application/json" }
            })
          for (const depth of [33, 40, MaxJsonDepth - 1]) {
            const res = yield* verdict(depth)
            assert.strictEqual(res.status, 400, `depth ${depth}: ${res.text.slice(0, 300)}`)
            assert.strictEqual(codeOf(res), "invalid_verdict_schema", `depth ${depth}`)
            assert.include(res.json().error.message, "nests more than 32 levels")
          }
          const shallow = yield* verdict(32)
          assert.strictEqual(shallow.status, 503, shallow.text.slice(0, 300))
          assert.strictEqual(codeOf(shallow), "no_route_available")
          for (const depth of [MaxJsonDepth, 5_000]) {
            const res = yield* verdict(depth)
            assert.strictEqual(res.status, 400, `depth ${depth}`)
            assert.strictEqual(codeOf(res), "invalid_body", `depth ${depth}`)
          }
        }))

      it.effect("POST /v1/router/select is invalid_body; the keys and billing routes the plain-text 422", () =>
        Effect.gen(function*() {
          const { owner, reader } = yield* seeded
          for (const secret of [owner, reader]) {
            const select = yield* callWithin("POST", "/v1/router/select", {
              secret,
              rawBody: `{"prompt":${nested(3_000, "\"x\"")}}`,
              headers: { "content-type": "application/json" }
            })
            // A key lacking the scope is refused from the headers, before its body is read (decisions.md, "Slow clients").
            if (secret === reader) {
              assert.strictEqual(select.status, 403)
              assert.strictEqual(codeOf(select), "scope_denied")
              continue
            }
            assert.strictEqual(select.status, 400)
            assert.strictEqual(codeOf(select), "invalid_body")
            const plain: Array<[string, string, string]> = [
              ["POST", "/v1/keys", `{"name":${nested(3_000, "\"x\"")},"scopes":["runs_read"]}`],
              ["POST", "/v1/keys", `{"name":"k","scopes":${nested(MaxJsonDepth, "\"runs_read\"")}}`],
              ["POST", "/v1/billing/checkout", `{"amount_micros":${nested(3_000)}}`],
              ["PUT", "/v1/billing/auto-recharge", `{"enabled":false,"threshold_micros":0,"amount_micros":${nested(3_000)}}`]
            ]
            for (const [method, path, rawBody] of plain) {
              const res = yield* callWithin(method, path, { secret, rawBody, headers: { "content-type": "application/json" } })
              assert.strictEqual(res.status, 422, `${method} ${path}: ${res.text.slice(0, 200)}`)
              assert.match(String(res.headers["content-type"]), /^text\/plain/)
              assert.isTrue(res.text.startsWith("Failed to deserialize the JSON body into the target type: "), res.text)
              assert.include(res.text, `nests deeper than ${MaxJsonDepth} levels`)
            }
          }
        }))
    })

    describe("413 on the runs and router GET routes", () => {
      it.effect("is the plain-text Failed to buffer the request body; the two large-body routes keep the JSON 413", () =>
        Effect.gen(function*() {
          const { owner } = yield* seeded
          const body = "x".repeat(MiB + 1)
          const paths = [
            "/v1/runs",
            "/v1/runs/run_0123456789abcdef0123456789abcdef",
            "/v1/runs/run_0123456789abcdef0123456789abcdef/stream",
            "/v1/router/models",
            "/v1/router/task-types"
          ]
          for (const path of paths) {
            for (const chunked of [false, true]) {
              // Node's client chunks a GET body only when told to.
              const framing: Record<string, string> = chunked ? { "transfer-encoding": "chunked" } : {}
              const address = yield* ServerAddress
              const res = yield* rawRequest(address.url, {
                path,
                headers: { authorization: `Bearer ${owner}`, ...framing, "x-request-id": "big-2" },
                body,
                chunked
              }).pipe(Effect.timeout(Duration.seconds(10)))
              assert.strictEqual(res.status, 413, `${path} chunked=${chunked}`)
              assert.match(String(res.headers["content-type"]), /^text\/plain/, path)
              assert.strictEqual(res.text, "Failed to buffer the request body: length limit exceeded")
              assert.strictEqual(res.headers["x-request-id"], "big-2")
            }
          }
          for (const path of ["/v1/runs", "/v1/router/select"]) {
            const res = yield* callWithin("POST", path, {
              secret: owner,
              rawBody: "x".repeat(4 * MiB + 1),
              headers: { "idempotency-key": freshKey() }
            })
            assert.strictEqual(res.status, 413, path)
            assert.strictEqual(codeOf(res), "body_too_large", path)
          }
        }))
    })

    describe("413 on the routes served without a credential", () => {
      it.effect("health, the OpenAPI document and the docs refuse a body over 1 MiB, declared or chunked", () =>
        Effect.gen(function*() {
          const address = yield* ServerAddress
          for (const path of ["/healthz", "/readyz", "/openapi.json", "/docs"]) {
            for (const chunked of [false, true]) {
              const framing: Record<string, string> = chunked ? { "transfer-encoding": "chunked" } : {}
              const res = yield* rawRequest(address.url, {
                path,
                headers: { ...framing, "x-request-id": "big-3" },
                body: "x".repeat(MiB + 1),
                chunked
              }).pipe(Effect.timeout(Duration.seconds(10)))
              assert.strictEqual(res.status, 413, `${path} chunked=${chunked}`)
              assert.strictEqual(res.text, "Failed to buffer the request body: length limit exceeded", path)
              assert.strictEqual(res.headers["x-request-id"], "big-3", path)
            }
            const small = yield* rawRequest(address.url, { path, headers: {}, body: "x".repeat(1024), chunked: false })
            assert.strictEqual(small.status, 200, `${path} with a small body`)
          }
        }))
    })

    describe("routing", () => {
      it.effect("a long path parameter reaches the handler, which answers its 404", () =>
        Effect.gen(function*() {
          const { owner } = yield* seeded
          for (const length of [513, 600, 8_000]) {
            const id = "x".repeat(length)
            const cases: Array<[string, string, string]> = [
              ["GET", `/v1/runs/${id}`, "run_not_found"],
              ["GET", `/v1/runs/run_${id}/stream`, "run_not_found"],
              ["GET", `/v1/keys/key_${id}`, "key_not_found"],
              ["DELETE", `/v1/keys/${id}`, "key_not_found"],
              ["GET", `/v1/usage/runs/${id}`, "run_not_found"]
            ]
            for (const [method, path, code] of cases) {
              const res = yield* callWithin(method, path, { secret: owner })
              assert.strictEqual(res.status, 404, `${method} ${path.slice(0, 40)}... (${length})`)
              assert.strictEqual(codeOf(res), code)
            }
          }
        }))

      it.effect("an allowed-origin preflight to an unknown path is the empty 404; to a route, the 204", () =>
        Effect.gen(function*() {
          const preflight = (path: string) =>
            callWithin("OPTIONS", path, {
              headers: { origin: Origin, "access-control-request-method": "POST", "x-request-id": "pf-2" }
            })
          for (const path of ["/nonexistent", "/v1/nonexistent", "/v1/runs/", "/v1/keys/abc/nothing"]) {
            const res = yield* preflight(path)
            assert.strictEqual(res.status, 404, path)
            assert.strictEqual(res.text, "")
            assert.strictEqual(res.headers["x-request-id"], "pf-2")
            assert.isUndefined(res.headers["access-control-allow-methods"])
          }
          for (const path of ["/v1/runs", "/v1/keys/key_abc", "/healthz"]) {
            const res = yield* preflight(path)
            assert.strictEqual(res.status, 204, path)
            assert.strictEqual(res.headers["access-control-allow-origin"], Origin)
            assert.strictEqual(res.headers["access-control-max-age"], "600")
          }
        }))

      it.effect("HEAD is 405 on every known path (credential or not) and 404 elsewhere, empty, with the request id", () =>
        Effect.gen(function*() {
          const { owner } = yield* seeded
          const cases: Array<[string, number]> = [
            ["/healthz", 405],
            ["/readyz", 405],
            ["/openapi.json", 405],
            ["/v1/keys", 405],
            ["/v1/runs/run_0123456789abcdef0123456789abcdef", 405],
            ["/v1/usage", 405],
            ["/nonexistent", 404],
            ["/healthz/", 404]
          ]
          for (const [path, status] of cases) {
            for (const secret of [undefined, owner]) {
              const res = yield* callWithin("HEAD", path, {
                ...(secret === undefined ? {} : { secret }),
                headers: { "x-request-id": "head-2" }
              })
              assert.strictEqual(res.status, status, `${path} credential=${secret !== undefined}`)
              assert.strictEqual(res.text, "")
              assert.strictEqual(res.headers["x-request-id"], "head-2")
            }
          }
        }))
    })
  }
)
