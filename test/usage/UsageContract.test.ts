/** The six usage routes against the shared route contract: authentication, every scope, the whole role table. */
import { describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { ServerAddress } from "../../src/server/Listen.js"
import { checkAuthentication, checkRoles, checkScopes, route, type RouteCase } from "../support/RouteContract.js"
import { oneQuestion, postRun } from "../support/Runs.js"
import { TestServerWithConsoleLive } from "../support/TestServer.js"

const UsageRoutes: ReadonlyArray<RouteCase<ServerAddress>> = [
  route("GET", "/v1/usage", "usage_read"),
  route("GET", "/v1/usage/ledger", "usage_read"),
  route("GET", "/v1/usage/daily", "usage_read"),
  route("GET", "/v1/usage/export?format=csv", "usage_read"),
  {
    method: "GET",
    scope: "usage_read",
    path: (organization) =>
      Effect.map(
        postRun(organization.secret, oneQuestion()).pipe(Effect.orDie),
        (response) => `/v1/usage/runs/${response.json().run_id}`
      )
  },
  route("GET", "/v1/quota", "usage_read")
]

layer(TestServerWithConsoleLive(), { excludeTestServices: true, timeout: "180 seconds" })("usage route contract", (it) => {
  describe("contract", () => {
    it.effect("every usage route: 401 codes, credential before body", () => checkAuthentication(UsageRoutes))
    it.effect("every usage route against every scope", () => checkScopes(UsageRoutes))
    it.effect("every usage route against the whole role table", () => checkRoles(UsageRoutes))
  })
})
