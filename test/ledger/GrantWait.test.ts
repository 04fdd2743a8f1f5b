/**
 * A burst on an organization this process holds no slice of: the runs wait for the lease grant under way and are
 * admitted against it in a batch, instead of each taking the organization's lock in an exact admission of its own
 * (AdmissionFlow.ts, `admitWith`). The first grant of an organization is its smallest slice (`MinSliceRuns` ceilings); the
 * runs it cannot cover wait for one more, sized by the burst's rate, so every run of the burst is stored against a
 * lease. With the first grant alone 4 were; before either, none was (every run went the exact way, holding outside any
 * lease). To make the whole burst arrive before the grant commits, the test holds the organization's account lock
 * (which the grant and the exact way both take) while the burst is sent. Settlement clears a run's lease, so the runs
 * are looked at while the upstream holds their calls. PostgreSQL only: the embedded database's connections share one
 * session, where a lock holds no one back.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Fiber, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { FakeUpstream } from "../support/FakeUpstream.js"
import { assertMoneyInvariants, grantCredit } from "../support/Invariants.js"
import { holdAccountLock } from "../support/Locks.js"
import { oneQuestion, postRun } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { databaseMode } from "../support/TestDatabase.js"
import { TestServerWithUpstreamLive } from "../support/TestServer.js"

const Burst = 12

layer(TestServerWithUpstreamLive(), { excludeTestServices: true, timeout: "60 seconds" })("a burst without a slice", (it) => {
  describe.skipIf(databaseMode() !== "postgres")("admission (PostgreSQL)", () => {
    it.effect("waits for the lease grant under way: runs of the burst are admitted against the lease", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const upstream = yield* FakeUpstream
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, 100_000_000)
        yield* upstream.hold
        const lock = yield* holdAccountLock(organization.organizationId)
        const burst = yield* Effect.forkChild(Effect.all(
          Array.from({ length: Burst }, () => postRun(organization.secret, oneQuestion())),
          { concurrency: "unbounded" }
        ))
        // Every request of the burst reaches admission while the lock is held (a late one would only weaken the test).
        yield* Effect.sleep("500 millis")
        yield* lock.release
        const [stored] = yield* sql<{ runs: number; leased: number }>`SELECT count(*)::int AS runs,
            count(lease_id)::int AS leased FROM runs WHERE organization_id = ${organization.organizationId} AND held`.pipe(
          Effect.filterOrFail((rows) => rows[0]!.runs === Burst),
          Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo({ duration: "10 seconds" })))
        )
        yield* upstream.release
        const responses = yield* Fiber.join(burst)
        assert.deepStrictEqual(responses.map((response) => response.status), Array(Burst).fill(200))
        assert.strictEqual(stored!.leased, Burst, "every run admitted against a grant (the first, or the one after it), none the exact way")
        yield* assertMoneyInvariants
      }))
  })
})
