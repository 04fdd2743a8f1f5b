/**
 * Load shedding (src/http/Overload.ts): while the event loop lags past OVERLOAD_MAX_LAG_MS, a new POST /v1/runs is
 * answered at once with 504 deadline_exceeded (request id, Server-Timing, nothing stored); other routes are served;
 * once the loop keeps up again, runs are taken as usual. Past RUNS_MAX_IN_FLIGHT runs and selections being served,
 * further ones are shed the same way.
 */
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { SqlClient } from "@effect/sql"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
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
  it.effect("a lagging event loop sheds new runs with 504 deadline_exceeded and stores nothing; the rest is served", () =>
    Effect.gen(function*() {
      const organization = yield* seedOrganization()
      yield* blockEventLoop(600)
      yield* Effect.sleep(1)
      const shed = yield* postRun(organization.secret, oneQuestion(), freshKey(), { headers: { "x-request-id": "shed-1" } })
      assert.strictEqual(shed.status, 504)
      assert.strictEqual(codeOf(shed), "deadline_exceeded")
      assert.deepStrictEqual(shed.json().error, { code: "deadline_exceeded", message: ShedMessage, request_id: "shed-1" })
      assert.strictEqual(shed.headers["x-request-id"], "shed-1")
      assert.match(String(shed.headers["server-timing"]), /total;dur=/)
      const list = yield* call("GET", "/v1/runs", { secret: organization.secret })
      assert.strictEqual(list.status, 200, "routes that do not run the model are never shed")

      const sql = yield* SqlClient.SqlClient
      const [stored] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM runs WHERE organization_id = ${organization.organizationId}`
      assert.strictEqual(stored!.n, 0, "a shed run stores nothing")

      yield* Effect.sleep(400)
      const taken = yield* postRun(organization.secret, oneQuestion())
      assert.strictEqual(taken.status, 200, "once the loop keeps up, runs are taken")
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
        assert.strictEqual(shed.status, 504, path)
        assert.strictEqual(shed.headers.get("x-request-id"), "over-1", path)
        assert.match(String(shed.headers.get("server-timing")), /admit;dur=0\.000, upstream;dur=0\.000, gateway;dur=/)
        assert.deepStrictEqual(await shed.json(), { error: { code: "deadline_exceeded", message: ShedMessage, request_id: "over-1" } })
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
