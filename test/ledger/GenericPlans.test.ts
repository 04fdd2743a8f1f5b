/**
 * The ledger's statements run on their generic plans from the first execution: admission's on the `asyncCommit`
 * pool (src/db/PgPool.ts, the pool's `plan_cache_mode`), the lease grants' in transactions that set it
 * (src/db/LedgerSql.ts), settlement's after its lock statement, which sets it (src/ledger/Settlement.ts).
 * PostgreSQL's own count of the plans each session made (`pg_prepared_statements`) shows no custom plan of
 * `ledger_admit_fast`, `ledger_position` or `ledger_settle`. Left to choose, it planned them again at each execution
 * (custom plans; at least the first five of every session). PostgreSQL only: the embedded database runs no named
 * statements.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import type pg from "pg"
import { PgPools } from "../../src/db/PgPool.js"
import { grantCredit } from "../support/Invariants.js"
import { oneQuestion, postRun } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { databaseMode } from "../support/TestDatabase.js"
import { TestServerWithUpstreamLive } from "../support/TestServer.js"

interface PlanCounts {
  readonly generic: number
  readonly custom: number
}

/** The plans every idle connection of the pool made for the statement, summed (each checked out at once). */
const plansOf = (pool: pg.Pool, statement: string) =>
  Effect.acquireUseRelease(
    Effect.promise(() => Promise.all(Array.from({ length: pool.idleCount }, () => pool.connect()))),
    (clients) =>
      Effect.promise(async () => {
        let generic = 0
        let custom = 0
        for (const client of clients) {
          const { rows } = await client.query<{ generic: number; custom: number }>(
            "SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE name = $1",
            [statement]
          )
          generic += rows[0]?.generic ?? 0
          custom += rows[0]?.custom ?? 0
        }
        return { generic, custom } satisfies PlanCounts
      }),
    (clients) => Effect.sync(() => clients.forEach((client) => client.release()))
  )

layer(TestServerWithUpstreamLive(), { excludeTestServices: true, timeout: "60 seconds" })("admission's plans", (it) => {
  describe.skipIf(databaseMode() !== "postgres")("generic plans (PostgreSQL)", () => {
    it.effect("admission's batch statement, the grants' position read and settlement's statement are never planned for their values", () =>
      Effect.gen(function*() {
        const { asyncCommit, main } = yield* PgPools
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, 100_000_000)
        // One run at a time: each batch is one execution of the statement, more than the five custom plans
        // PostgreSQL makes before it considers the generic one.
        for (let index = 0; index < 12; index++) {
          const response = yield* postRun(organization.secret, oneQuestion())
          assert.strictEqual(response.status, 200)
        }
        const admissions = yield* plansOf(asyncCommit, "ledger_admit_fast")
        assert.isAtLeast(admissions.generic, 1, "the statement ran on its pool")
        assert.strictEqual(admissions.custom, 0, `custom plans made: ${admissions.custom}`)
        // The lease grants' read of the organization's position, in transactions on the main pool
        // (src/db/LedgerSql.ts).
        const positions = yield* plansOf(main, "ledger_position")
        assert.isAtLeast(positions.generic, 1, "the organization's slice was granted and topped up")
        assert.strictEqual(positions.custom, 0, `custom plans made: ${positions.custom}`)
        // Settlement's statement, bound after its locks in one round trip on the main pool (src/ledger/Settlement.ts).
        const settlements = yield* plansOf(main, "ledger_settle")
        assert.isAtLeast(settlements.generic, 1, "the runs settled on the main pool")
        assert.strictEqual(settlements.custom, 0, `custom plans made: ${settlements.custom}`)
      }))
  })
})
