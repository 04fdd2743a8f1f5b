/**
 * The router routes against the shared route contract: authentication (401 codes, no `WWW-Authenticate`, the
 * credential checked before a 5 MiB body), every scope (`runs_write` for select, `runs_read` for the two listings)
 * and the whole role table through console sessions.
 */
import { describe, layer } from "@effect/vitest"
import { checkAuthentication, checkRoles, checkScopes, route, type RouteCase } from "../support/RouteContract.js"
import { TestServerWithConsoleLive } from "../support/TestServer.js"

const RouterRoutes: ReadonlyArray<RouteCase> = [
  route("POST", "/v1/router/select", "runs_write", { body: { prompt: "Translate 'good morning' into French." } }),
  route("GET", "/v1/router/task-types", "runs_read"),
  route("GET", "/v1/router/models", "runs_read")
]

layer(TestServerWithConsoleLive(), { excludeTestServices: true, timeout: "180 seconds" })("router route contract", (it) => {
  describe("contract", () => {
    it.effect("every router route: 401 codes, credential before body", () => checkAuthentication(RouterRoutes))
    it.effect("every router route against every scope", () => checkScopes(RouterRoutes))
    it.effect("every router route against the whole role table", () => checkRoles(RouterRoutes))
  })
})
