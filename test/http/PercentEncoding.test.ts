/**
 * A malformed percent-encoding in a path is `404` (no such resource), never `405` (decisions.md, Precise rules;
 * src/http/ErrorBoundary.ts): whatever the method, the credential or the route its undecoded text would match. A
 * well-formed encoding still reaches its route.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call, codeOf } from "../support/Api.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerLive } from "../support/TestServer.js"

const Malformed = [
  "/v1/runs/%",
  "/v1/runs/%zz",
  "/v1/runs/run_%E0%A4%A",
  "/v1/runs/%FF",
  "/v1/runs/%C0%80",
  "/v1/runs/%ED%A0%80",
  "/v1/runs/%/stream",
  "/v1/runs/run_0123456789abcdef0123456789abcdef%",
  "/v1/keys/%",
  "/v1/keys/key_%G1/rotate",
  "/v1/runs%",
  "/v1/usage/%",
  "/v1/billing/%FE%FF"
]

layer(TestServerLive(), { excludeTestServices: true, timeout: "60 seconds" })("malformed percent-encoding in a path", (it) => {
  describe("is 404, never 405", () => {
    it.effect("on every route and method, with a credential or without", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        for (const path of Malformed) {
          for (const method of ["GET", "POST", "PATCH", "PUT", "DELETE", "HEAD"]) {
            for (const credential of [secret, undefined]) {
              const response = yield* call(method, path, credential === undefined ? {} : { secret: credential })
              assert.strictEqual(response.status, 404, `${method} ${path} (${credential === undefined ? "no credential" : "key"})`)
              assert.strictEqual(response.text, "", `${method} ${path}: an empty body`)
            }
          }
        }
      }))

    it.effect("a well-formed encoding still reaches its route; a known path keeps its 405", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        const run = yield* call("GET", "/v1/runs/run_%30123456789abcdef0123456789abcdef", { secret })
        assert.strictEqual(run.status, 404)
        assert.strictEqual(codeOf(run), "run_not_found")
        assert.strictEqual((yield* call("DELETE", "/v1/runs/run_%41", { secret })).status, 405)
      }))
  })
})
