/**
 * A run whose pending row was lost (its admission commits asynchronously: a PostgreSQL crash may drop the last few
 * hundred milliseconds of them; docs/ledger.md, crash analysis, case 1): its settlement finds no row and stores the
 * run again, settled, with its call billed once, holding nothing. The test removes the row while the upstream holds
 * the run's call (the run was admitted the exact way, its hold outside any lease, so the row is all a crash loses).
 */
import { SqlClient } from "@effect/sql"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Fiber, Schedule } from "effect"
import { FakeUpstream } from "../support/FakeUpstream.js"
import { assertMoneyInvariants, grantCredit } from "../support/Invariants.js"
import { freshKey, oneQuestion, postRun } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerWithUpstreamLive } from "../support/TestServer.js"

layer(TestServerWithUpstreamLive(), { excludeTestServices: true, timeout: "60 seconds" })("a lost pending row", (it) => {
  describe("settlement", () => {
    it.effect("stores the run again, settled and billed once, holding nothing", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const upstream = yield* FakeUpstream
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, 10_000_000)
        const key = freshKey()
        yield* upstream.hold
        const run = yield* Effect.fork(postRun(organization.secret, oneQuestion(), key))
        // The run is stored pending and its call waits at the upstream: remove the row, as a crash would.
        const removed = yield* sql<{ id: string }>`DELETE FROM runs
          WHERE organization_id = ${organization.organizationId} AND idempotency_key = ${key} RETURNING id::text`.pipe(
          Effect.filterOrFail((rows) => rows.length === 1),
          Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("10 seconds")))
        )
        yield* upstream.release
        const response = yield* Fiber.join(run)
        assert.strictEqual(response.status, 200, response.text)
        assert.strictEqual(response.json().run_id, `run_${removed[0]!.id.replaceAll("-", "")}`)
        const [stored] = yield* sql<{ state: string; held: boolean; cost: number; billed: number }>`SELECT r.state, r.held,
            r.cost_micros::int AS cost,
            (SELECT count(*)::int FROM ledger_entries l WHERE l.run_id = r.id AND l.billed) AS billed
          FROM runs r WHERE r.id = ${removed[0]!.id}`
        assert.deepStrictEqual({ state: stored!.state, held: stored!.held, billed: stored!.billed }, { state: "completed", held: false, billed: 1 })
        assert.isAbove(stored!.cost, 0)
        yield* assertMoneyInvariants
      }))
  })
})
