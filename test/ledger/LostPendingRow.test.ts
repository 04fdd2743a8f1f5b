/**
 * A run whose pending row was lost (its admission commits asynchronously: a PostgreSQL crash may drop the last few
 * hundred milliseconds of them; docs/ledger.md, crash analysis, case 1): its settlement finds no row and stores the
 * run again, settled, with its call billed once, holding nothing. The test removes what the run's admission wrote
 * while the upstream holds its call: the row and, when the run was admitted against a lease (the organization's first
 * run waits for the lease granted for it), the lease's held increase, which the same transaction made. Both ways of
 * admission are covered: against a lease, and the exact way (credit for 1.25 ceilings, which no slice can cover).
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Fiber, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { FakeUpstream } from "../support/FakeUpstream.js"
import { assertMoneyInvariants, grantCredit } from "../support/Invariants.js"
import { freshKey, oneQuestion, postRun } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerWithUpstreamLive } from "../support/TestServer.js"

layer(TestServerWithUpstreamLive(), { excludeTestServices: true, timeout: "60 seconds" })("a lost pending row", (it) => {
  describe("settlement", () => {
    // A grant takes at most half the free credit, and a run waits for two grants at most: with credit for 1.25
    // ceilings, its slice reaches 0.94 of a ceiling (a half, then a quarter) and the run goes the exact way.
    const admissions = [
      ["admitted against a lease", 10_000_000, true],
      ["admitted the exact way", 25_000, false]
    ] as const
    for (const [way, credit, leased] of admissions) {
      it.effect(`${way}: stores the run again, settled and billed once, holding nothing`, () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const upstream = yield* FakeUpstream
          const organization = yield* seedOrganization({ billing: true })
          yield* grantCredit(organization.organizationId, credit)
          const key = freshKey()
          yield* upstream.hold
          const run = yield* Effect.forkChild(postRun(organization.secret, oneQuestion(), key))
          // The run is stored pending and its call waits at the upstream: remove what its admission wrote, as a crash
          // would (one transaction: the row and, when a lease covered it, the lease's held increase).
          const removed = yield* sql<{ id: string; leased: boolean }>`WITH gone AS (
              DELETE FROM runs WHERE organization_id = ${organization.organizationId} AND idempotency_key = ${key}
              RETURNING id, lease_id, hold_micros, hold_tokens, hold_credit
            ), unheld AS (
              UPDATE ledger_leases l SET
                credit_held = l.credit_held - CASE WHEN g.hold_credit THEN g.hold_micros ELSE 0 END,
                spend_held = l.spend_held - CASE WHEN l.spend_limited THEN g.hold_micros ELSE 0 END,
                tokens_held = l.tokens_held - CASE WHEN l.tokens_limited THEN g.hold_tokens ELSE 0 END
              FROM gone g WHERE l.id = g.lease_id RETURNING l.id
            )
            SELECT id::text, lease_id IS NOT NULL AS leased FROM gone`.pipe(
            Effect.filterOrFail((rows) => rows.length === 1),
            Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo({ duration: "10 seconds" })))
          )
          assert.strictEqual(removed[0]!.leased, leased, way)
          yield* upstream.release
          const response = yield* Fiber.join(run)
          assert.strictEqual(response.status, 200, response.text)
          assert.strictEqual(response.json().run_id, `run_${removed[0]!.id.replaceAll("-", "")}`)
          const [stored] = yield* sql<{ state: string; held: boolean; cost: number; billed: number }>`SELECT r.state, r.held,
              r.cost_micros::int AS cost,
              (SELECT count(*)::int FROM ledger_entries l WHERE l.run_id = r.id AND l.billed) AS billed
            FROM runs r WHERE r.id = ${removed[0]!.id}`
          assert.deepStrictEqual(
            { state: stored!.state, held: stored!.held, billed: stored!.billed },
            { state: "completed", held: false, billed: 1 }
          )
          assert.isAbove(stored!.cost, 0)
          yield* assertMoneyInvariants
        }))
    }
  })
})
