/**
 * Load shedding (src/http/Overload.ts): while the event loop lags past OVERLOAD_MAX_LAG_MS, a new POST /v1/runs is
 * answered at once with 504 deadline_exceeded (request id, Server-Timing, nothing stored); other routes are served;
 * once the loop keeps up again, runs are taken as usual.
 */
import { SqlClient } from "@effect/sql"
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ShedMessage } from "../../src/http/Overload.js"
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
