/**
 * The route table's start-up checks: an authenticated endpoint must declare its scope (`RequiredScope`), and its
 * group must have the request-shape middleware that checks it; the service's own API passes both.
 */
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Api } from "../../schema/Api.js"
import { Authentication } from "../../schema/Auth.js"
import { PlainRequestShape } from "../../schema/Boundary.js"
import { RequiredScope } from "../../schema/Scope.js"
import { makeRouteTable } from "../../src/http/RouteTable.js"

const endpoint = HttpApiEndpoint.get("list", "/v1/things", { success: Schema.Struct({}) })

describe("makeRouteTable", () => {
  it("refuses an authenticated endpoint that declares no scope", () => {
    class Things extends HttpApiGroup.make("things").add(endpoint).middleware(PlainRequestShape).middleware(Authentication) {}
    assert.throws(() => makeRouteTable(HttpApi.make("test").add(Things)), "endpoint list of group things declares no scope")
  })

  it("refuses an authenticated endpoint whose group has no request-shape middleware to check the scope", () => {
    class Things extends HttpApiGroup.make("things").add(endpoint.annotate(RequiredScope, "keys_read")).middleware(Authentication) {}
    assert.throws(
      () => makeRouteTable(HttpApi.make("test").add(Things)),
      "endpoint list of group things has no request-shape middleware to check its scope"
    )
  })

  it("knows the scope of every authenticated endpoint of the service's API", () => {
    const table = makeRouteTable(Api)
    const scopes = [...table.endpoints.values()].map((info) => `${info.method} ${info.path} ${info.scope}`)
    assert.include(scopes, "POST /v1/runs runs_write")
    assert.include(scopes, "GET /v1/keys keys_read")
    assert.isTrue([...table.endpoints.values()].every((info) => info.scope !== undefined))
  })
})
