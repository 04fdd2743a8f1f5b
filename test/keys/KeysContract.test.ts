/**
 * The keys routes against the shared route contract: authentication, every scope against every route, and the whole
 * role table through console sessions.
 */
import { describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { checkAuthentication, checkRoles, checkScopes, route, type RouteCase } from "../support/RouteContract.js"
import { seedKey } from "../support/Seed.js"
import { TestServerWithConsoleLive } from "../support/TestServer.js"
import type { Keys } from "../../src/keys/Keys.js"

const throwawayKey = (method: string, suffix: string): RouteCase<Keys> => ({
  method,
  scope: method === "GET" ? "keys_read" : "keys_write",
  path: (organization) =>
    Effect.map(
      // The target holds only keys_write, which every credential allowed on these routes holds too (a key can be
      // rotated or revoked only by a credential holding all its scopes: test/keys/Keys.test.ts).
      seedKey(organization.organizationId, organization.ownerId, ["keys_write"], "target").pipe(Effect.orDie),
      (key) => `/v1/keys/${key.id}${suffix}`
    )
})

const KeysRoutes: ReadonlyArray<RouteCase<Keys>> = [
  route("GET", "/v1/keys", "keys_read"),
  throwawayKey("GET", ""),
  route("POST", "/v1/keys", "keys_write", { body: { name: "ci", scopes: ["runs_read"] } }),
  throwawayKey("DELETE", ""),
  throwawayKey("POST", "/rotate")
]

layer(TestServerWithConsoleLive(), { excludeTestServices: true, timeout: "120 seconds" })("keys route contract", (it) => {
  describe("authentication", () => {
    it.effect("every keys route: 401 codes without WWW-Authenticate, credential before body", () => checkAuthentication(KeysRoutes))
  })
  describe("scopes", () => {
    it.effect("every keys route against every scope: 403 scope_denied naming the route's scope", () => checkScopes(KeysRoutes))
  })
  describe("roles", () => {
    it.effect("every keys route against the whole role table and a role outside it", () => checkRoles(KeysRoutes))
  })
})
