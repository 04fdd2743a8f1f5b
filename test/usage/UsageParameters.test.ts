/**
 * The usage routes' query rules over HTTP: what the boundary refuses in plain text (unknown, repeated and
 * non-whole-number parameters) and what the window and limit rules refuse as `400 invalid_parameter`, each with the
 * rule in its message, and the window echoed back (the current UTC month by default).
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { formatTimestamp } from "../../schema/Ids.js"
import type { RawResponse } from "../support/RawHttp.js"
import { monthOf } from "../../src/usage/Window.js"
import { call, codeOf } from "../support/Api.js"
import { seedKey, seedOrganization } from "../support/Seed.js"
import { TestServerLive } from "../support/TestServer.js"

const WindowRoutes = ["/v1/usage", "/v1/usage/ledger", "/v1/usage/daily"] as const

const query = (params: Record<string, string>) =>
  Object.entries(params).map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join("&")

const assertPlainQueryRejection = (response: RawResponse, what: string) => {
  assert.strictEqual(response.status, 400, `${what}: ${response.text}`)
  assert.isTrue(response.text.startsWith("Failed to deserialize query string: "), `${what}: ${response.text}`)
  assert.match(String(response.headers["content-type"]), /^text\/plain/, what)
  assert.isString(response.headers["x-request-id"], what)
  assert.notInclude(response.text, String(response.headers["x-request-id"]), what)
}

const assertInvalidParameter = (response: RawResponse, rule: string | RegExp, what: string) => {
  assert.strictEqual(response.status, 400, `${what}: ${response.text}`)
  assert.strictEqual(codeOf(response), "invalid_parameter", what)
  const error = response.json().error
  if (typeof rule === "string") assert.include(error.message, rule, what)
  else assert.match(error.message, rule, what)
  assert.strictEqual(error.request_id, response.headers["x-request-id"], what)
}

layer(TestServerLive(), { excludeTestServices: true, timeout: "120 seconds" })("usage query parameters", (it) => {
  describe("GET /v1/usage, /ledger, /daily, /runs/{run_id}, /v1/quota > 400 Failed to deserialize query string", () => {
    it.effect("an unknown parameter, on every usage route, including those that take none", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        const run = "/v1/usage/runs/run_00000000000000000000000000000000"
        for (const path of [...WindowRoutes.map((route) => `${route}?foo=1`), `${run}?foo=1`, "/v1/quota?foo=1", "/v1/quota?start_at=2026-01-01T00:00:00Z"]) {
          const response = yield* call("GET", path, { secret })
          assertPlainQueryRejection(response, path)
          assert.include(response.text, "unknown field", path)
        }
        const limitElsewhere = yield* call("GET", "/v1/usage?limit=5", { secret })
        assertPlainQueryRejection(limitElsewhere, "limit is only the ledger's")
      }))

    it.effect("a repeated parameter, and a ledger limit that is not a whole number", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        const bounds = "start_at=2026-01-01T00:00:00Z&end_at=2026-01-02T00:00:00Z"
        for (const route of WindowRoutes) {
          assertPlainQueryRejection(yield* call("GET", `${route}?${bounds}&start_at=2026-01-01T00:00:00Z`, { secret }), `${route} repeated start_at`)
        }
        for (const limit of ["2.5", "abc", "", "1e3", "+5", " 5", "0x10"]) {
          const path = `/v1/usage/ledger?limit=${encodeURIComponent(limit)}`
          assertPlainQueryRejection(yield* call("GET", path, { secret }), path)
        }
        assertPlainQueryRejection(yield* call("GET", "/v1/usage/ledger?limit=5&limit=6", { secret }), "repeated limit")
      }))
  })

  describe("GET /v1/usage, /ledger, /daily > 400 invalid_parameter", () => {
    it.effect("one bound without the other", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        for (const route of WindowRoutes) {
          for (const params of [{ start_at: "2026-01-01T00:00:00Z" }, { end_at: "2026-01-01T00:00:00Z" }, { start_at: "" }]) {
            const path = `${route}?${query(params)}`
            assertInvalidParameter(yield* call("GET", path, { secret }), "start_at and end_at must be sent together", path)
          }
        }
      }))

    it.effect("a bound not exactly YYYY-MM-DDTHH:MM:SSZ on a real calendar date", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        const good = "2026-01-01T00:00:00Z"
        const bad = [
          "2026-02-01T00:00:00.000Z", "2026-02-01T00:00:00+00:00", "2026-02-01T01:00:00+01:00", "2026-02-01",
          "2026-02-01 00:00:00Z", "2026-02-01t00:00:00z", "2026-02-30T00:00:00Z", "2025-02-29T00:00:00Z",
          "2026-13-01T00:00:00Z", "2026-02-01T24:00:00Z", "2026-02-01T00:00:60Z", "0000-01-01T00:00:00Z", "", "1769904000"
        ]
        for (const route of WindowRoutes) {
          for (const value of bad) {
            const asStart = `${route}?${query({ start_at: value, end_at: "2026-03-01T00:00:00Z" })}`
            assertInvalidParameter(yield* call("GET", asStart, { secret }), /^start_at must be a UTC timestamp exactly like/, asStart)
            const asEnd = `${route}?${query({ start_at: good, end_at: value })}`
            assertInvalidParameter(yield* call("GET", asEnd, { secret }), /^end_at must be a UTC timestamp exactly like/, asEnd)
          }
        }
      }))

    it.effect("start_at not before end_at (the window is half-open, so equal bounds are empty)", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        for (const route of WindowRoutes) {
          for (const [start, end] of [["2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"], ["2026-01-02T00:00:00Z", "2026-01-01T23:59:59Z"]] as const) {
            const path = `${route}?${query({ start_at: start, end_at: end })}`
            assertInvalidParameter(yield* call("GET", path, { secret }), "start_at must be before end_at", path)
          }
        }
      }))

    it.effect("a ledger limit below 1; the window rules are checked first", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        for (const limit of ["0", "-1", "-0", "-99999999999999999999"]) {
          assertInvalidParameter(yield* call("GET", `/v1/usage/ledger?limit=${limit}`, { secret }), "limit must be at least 1", limit)
        }
        const both = yield* call("GET", "/v1/usage/ledger?limit=0&start_at=2026-01-01T00:00:00Z", { secret })
        assertInvalidParameter(both, "start_at and end_at must be sent together", "window before limit")
      }))

    it.effect("a daily window longer than 92 days (92 x 24 hours)", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        for (const [start, end, length] of [
          ["2026-01-01T00:00:00Z", "2026-04-03T00:00:01Z", "92 days 00:00:01"],
          ["2026-01-01T12:00:00Z", "2026-04-03T12:00:01Z", "92 days 00:00:01"],
          ["2020-01-01T00:00:00Z", "2026-01-01T00:00:00Z", "2192 days 00:00:00"]
        ] as const) {
          const path = `/v1/usage/daily?${query({ start_at: start, end_at: end })}`
          assertInvalidParameter(yield* call("GET", path, { secret }), `the daily window is ${length} long; at most 92 days`, path)
        }
        const ninetyTwo = yield* call("GET", `/v1/usage/daily?${query({ start_at: "2026-01-01T00:00:00Z", end_at: "2026-04-03T00:00:00Z" })}`, { secret })
        assert.strictEqual(ninetyTwo.status, 200, ninetyTwo.text)
        assert.strictEqual(ninetyTwo.json().days.length, 92)
        // Exactly 92 x 24 hours from noon: accepted, with one row per UTC day it touches (93).
        const sent = { start_at: "2026-01-01T12:00:00Z", end_at: "2026-04-03T12:00:00Z" }
        const atNoon = yield* call("GET", `/v1/usage/daily?${query(sent)}`, { secret })
        assert.strictEqual(atNoon.status, 200, atNoon.text)
        assert.deepStrictEqual(atNoon.json().window, sent)
        const dates = atNoon.json().days.map((day: any) => day.date)
        assert.strictEqual(dates.length, 93)
        assert.strictEqual(dates[0], "2026-01-01")
        assert.strictEqual(dates.at(-1), "2026-04-03")
        const rollup = yield* call("GET", `/v1/usage?${query({ start_at: "2020-01-01T00:00:00Z", end_at: "2026-01-01T00:00:00Z" })}`, { secret })
        assert.strictEqual(rollup.status, 200, "only the daily series is bounded")
      }))

    it.effect("the scope is checked before the window rules", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const key = yield* seedKey(organization.organizationId, organization.ownerId, ["runs_read"])
        const response = yield* call("GET", "/v1/usage?start_at=bad", { secret: key.secret })
        assert.strictEqual(response.status, 403)
        assert.strictEqual(codeOf(response), "scope_denied")
      }))
  })

  describe("GET /v1/usage, /ledger, /daily > 200", () => {
    it.effect("echo the window as sent, or the current UTC calendar month by default", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        const sent = { start_at: "0001-01-01T00:00:00Z", end_at: "9999-12-31T23:59:59Z" }
        for (const route of ["/v1/usage", "/v1/usage/ledger"]) {
          const explicit = yield* call("GET", `${route}?${query(sent)}`, { secret })
          assert.strictEqual(explicit.status, 200, explicit.text)
          assert.deepStrictEqual(explicit.json().window, sent, route)
        }
        for (const route of WindowRoutes) {
          const before = monthOf(new Date())
          const response = yield* call("GET", route, { secret })
          const after = monthOf(new Date())
          assert.strictEqual(response.status, 200, response.text)
          const windows = [before, after].map((month) => ({ start_at: formatTimestamp(month.start), end_at: formatTimestamp(month.end) }))
          assert.deepInclude(windows, response.json().window, route)
        }
      }))

    it.effect("the ledger echoes its limit: 50 by default, 200 above 200", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        for (const [params, limit] of [["", 50], ["?limit=1", 1], ["?limit=200", 200], ["?limit=201", 200], ["?limit=100000000000000000000", 200]] as const) {
          const response = yield* call("GET", `/v1/usage/ledger${params}`, { secret })
          assert.strictEqual(response.status, 200, response.text)
          assert.strictEqual(response.json().limit, limit, params)
        }
      }))
  })
})
