/**
 * Load shedding (src/http/Overload.ts): while the event loop lags past OVERLOAD_MAX_LAG_MS, a new POST /v1/runs is
 * answered at once with 503 no_route_available and Retry-After (request id, Server-Timing, nothing stored); other
 * routes are served; once the loop keeps up again, runs are taken as usual. Past the adaptive limit (at most
 * RUNS_MAX_IN_FLIGHT) of runs and selections being served, further ones are shed the same way; the limit shrinks as
 * the service's own time per request grows and grows back when it recovers, whatever the upstream's time.
 */
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { SqlClient } from "@effect/sql"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { DefaultLimitOptions, GradientLimit } from "../../src/http/ConcurrencyLimit.js"
import { makeCors } from "../../src/http/Cors.js"
import { ShedMessage, startOverloadGuard } from "../../src/http/Overload.js"
import { call, codeOf } from "../support/Api.js"
import { freshKey, oneQuestion, postRun } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerLive } from "../support/TestServer.js"

/** Keeps the event loop busy, as a saturated process would. */
const blockEventLoop = (ms: number) =>
  Effect.sync(() => {
    const until = performance.now() + ms
    while (performance.now() < until) {
      // busy
    }
  })

layer(TestServerLive({ overloadMaxLagMs: 50 }), { excludeTestServices: true, timeout: "60 seconds" })("overload", (it) => {
  it.effect("a lagging event loop sheds new runs with 503 no_route_available and Retry-After, stores nothing; the rest is served", () =>
    Effect.gen(function*() {
      const organization = yield* seedOrganization()
      yield* blockEventLoop(600)
      yield* Effect.sleep(1)
      const shed = yield* postRun(organization.secret, oneQuestion(), freshKey(), { headers: { "x-request-id": "shed-1" } })
      assert.strictEqual(shed.status, 503)
      assert.strictEqual(codeOf(shed), "no_route_available")
      assert.strictEqual(shed.headers["retry-after"], "1")
      assert.deepStrictEqual(shed.json().error, { code: "no_route_available", message: ShedMessage, request_id: "shed-1" })
      assert.strictEqual(shed.headers["x-request-id"], "shed-1")
      assert.match(String(shed.headers["server-timing"]), /total;dur=/)
      const list = yield* call("GET", "/v1/runs", { secret: organization.secret })
      assert.strictEqual(list.status, 200, "routes that do not run the model are never shed")

      const sql = yield* SqlClient.SqlClient
      const [stored] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM runs WHERE organization_id = ${organization.organizationId}`
      assert.strictEqual(stored!.n, 0, "a shed run stores nothing")

      const taken = yield* Effect.retry(
        Effect.filterOrFail(Effect.zipRight(Effect.sleep(100), postRun(organization.secret, oneQuestion())), (response: { readonly status: number }) => response.status !== 503),
        { times: 50 }
      )
      assert.strictEqual(taken.status, 200, `once the loop keeps up, runs are taken: ${taken.text}`)
    }))
})

describe("the in-flight limit (RUNS_MAX_IN_FLIGHT)", () => {
  it("sheds runs and selections beyond the limit, counts a request until its response closes, never sheds other routes", async () => {
    const guard = startOverloadGuard({ maxLagMs: 0, maxInFlight: 1, cors: makeCors([]) })
    const held: Array<ServerResponse> = []
    const server = createServer((request, response) => {
      if (guard.shed(request, response)) return
      request.resume()
      held.push(response)
    })
    await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening))
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const send = (method: string, path: string, requestId: string) =>
      fetch(`${base}${path}`, { method, headers: { "x-request-id": requestId }, ...(method === "POST" ? { body: "{}" } : {}) })
    try {
      const first = send("POST", "/v1/runs", "held-1")
      while (held.length === 0) await new Promise((wake) => setTimeout(wake, 5))
      for (const path of ["/v1/runs", "/v1/router/select"]) {
        const shed = await send("POST", path, "over-1")
        assert.strictEqual(shed.status, 503, path)
        assert.strictEqual(shed.headers.get("retry-after"), "1", path)
        assert.strictEqual(shed.headers.get("x-request-id"), "over-1", path)
        assert.match(String(shed.headers.get("server-timing")), /admit;dur=0\.000, upstream;dur=0\.000, gateway;dur=/)
        assert.deepStrictEqual(await shed.json(), { error: { code: "no_route_available", message: ShedMessage, request_id: "over-1" } })
      }
      const other = send("GET", "/v1/runs", "list-1")
      while (held.length === 1) await new Promise((wake) => setTimeout(wake, 5))
      held.splice(0).forEach((response) => response.end("ok"))
      assert.strictEqual((await first).status, 200)
      assert.strictEqual((await other).status, 200, "a route that does not run the model is never shed")
      const next = send("POST", "/v1/runs", "after-1")
      while (held.length === 0) await new Promise((wake) => setTimeout(wake, 5))
      held.splice(0).forEach((response) => response.end("ok"))
      assert.strictEqual((await next).status, 200, "a closed response frees its place")
    } finally {
      guard.stop()
      held.forEach((response) => response.end())
      await new Promise((closed) => server.close(closed))
    }
  })
})

describe("the adaptive limit (GradientLimit)", () => {
  const run = (limit: GradientLimit, serviceMs: number, count: number) => {
    for (let i = 0; i < count; i++) limit.record(serviceMs, limit.limit)
  }

  it("holds while the service's time is steady, shrinks when it grows, recovers when it falls back", () => {
    const limit = new GradientLimit({ ...DefaultLimitOptions, initial: 64 })
    run(limit, 2, 2_000)
    const steady = limit.limit
    assert.isAtLeast(steady, 64, "steady times let the limit probe upwards")
    run(limit, 20, 200)
    const saturated = limit.limit
    assert.isBelow(saturated, steady / 2, "a tenfold slower service halves the limit or more")
    assert.isAtLeast(saturated, DefaultLimitOptions.min)
    run(limit, 2, 2_000)
    assert.isAbove(limit.limit, saturated * 2, "the limit grows back once the service is fast again")
  })

  it("tolerates a busy but keeping-up service: times up to the tolerance above the long run keep the limit", () => {
    const limit = new GradientLimit({ ...DefaultLimitOptions, initial: 64 })
    run(limit, 2, 2_000)
    const steady = limit.limit
    run(limit, 2.8, 300)
    assert.isAtLeast(limit.limit, steady, "1.4 times slower is load, not queueing")
    const strict = new GradientLimit({ ...DefaultLimitOptions, initial: 64, tolerance: 1 })
    run(strict, 2, 2_000)
    run(strict, 2.8, 300)
    assert.isBelow(strict.limit, steady, "without the tolerance the same times shrink it")
  })

  it("never leaves its bounds, and does not grow while far fewer requests than it are in flight", () => {
    const limit = new GradientLimit({ ...DefaultLimitOptions, initial: 16, min: 4, max: 32 })
    run(limit, 1, 5_000)
    assert.strictEqual(limit.limit, 32)
    run(limit, 1_000, 200)
    assert.strictEqual(limit.limit, 4)
    const idle = new GradientLimit({ ...DefaultLimitOptions, initial: 16, min: 4, max: 32 })
    for (let i = 0; i < 5_000; i++) idle.record(1, 1)
    assert.strictEqual(idle.limit, 16, "a handful in flight says nothing about how many more would fit")
  })
})
