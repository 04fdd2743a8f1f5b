/**
 * A run's deadline answered from its timer, over HTTP (src/runs/RunsHttp.ts; the timer is `startRun`'s, in
 * src/runs/RunExecution.ts): the model has answered, but the run's settlement is still queued when its deadline and
 * grace pass, so the caller is told `504 deadline_exceeded` at once, with the run's `Server-Timing` (admission and the
 * model call so far) and the caller's request id, while the run's work goes on; the settlement, once it runs, stores
 * the run `failed` with its call billed, never `completed`. To keep the settlement queued, the test holds the credit
 * account lock of another organization whose settlement is under way: each process settles one batch at a time
 * (docs/ledger.md, "Batches: one transaction in flight"), so the run's batch waits behind it. PostgreSQL only: the
 * embedded database's connections share one session, where a lock holds no one back.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Fiber, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { codeOf } from "../support/Api.js"
import { FakeUpstream } from "../support/FakeUpstream.js"
import { assertMoneyInvariants, grantCredit } from "../support/Invariants.js"
import { holdAccountLock } from "../support/Locks.js"
import { freshKey, oneQuestion, postRun } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { databaseMode } from "../support/TestDatabase.js"
import { TestServerWithUpstreamLive } from "../support/TestServer.js"

const poll = Schedule.spaced("20 millis").pipe(Schedule.upTo({ duration: "10 seconds" }))

layer(TestServerWithUpstreamLive(), { excludeTestServices: true, timeout: "60 seconds" })("a deadline answered from its timer", (it) => {
  describe.skipIf(databaseMode() !== "postgres")("settlement queued past the deadline (PostgreSQL)", () => {
    it.effect("504 at the deadline with the run's Server-Timing and request id; stored failed and billed, not completed", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        const blocker = yield* seedOrganization({ billing: true })
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(blocker.organizationId, 100_000_000)
        yield* grantCredit(organization.organizationId, 100_000_000)

        // The blocking run is admitted and at the model; then its organization's account is locked, and its
        // settlement, once the model answers, waits for that lock.
        yield* upstream.hold
        const blocking = yield* Effect.forkChild(postRun(blocker.secret, oneQuestion({ deadline_ms: 20_000 }), freshKey()))
        yield* upstream.requests.pipe(Effect.filterOrFail((requests) => requests.length === 1), Effect.retry(poll))
        const lock = yield* holdAccountLock(blocker.organizationId)
        yield* upstream.release
        yield* sql<{ waiting: number }>`SELECT count(*)::int AS waiting FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'`.pipe(
          Effect.filterOrFail((rows) => rows[0]!.waiting >= 1),
          Effect.retry(poll)
        )

        // The settlement cannot run while the lock is held, so an answer at all is the timer's. The deadline leaves
        // admission and the model's instant answer ample time on a busy machine (the Server-Timing shows both).
        const response = yield* postRun(organization.secret, oneQuestion({ deadline_ms: 2_000 }), freshKey(), {
          headers: { "x-request-id": "timer-run-1" }
        }).pipe(Effect.timeoutOrElse({
          duration: "30 seconds",
          orElse: () => Effect.die(new Error("not answered at its deadline: the answer waited for its settlement"))
        }))
        assert.strictEqual(response.status, 504, response.text)
        assert.strictEqual(codeOf(response), "deadline_exceeded")
        assert.match(String(response.headers["server-timing"]), /^admit;dur=[0-9.]+, upstream;dur=[0-9.]+, gateway;dur=[0-9.]+, total;dur=[0-9.]+/)
        assert.strictEqual(response.headers["x-request-id"], "timer-run-1")
        assert.strictEqual(response.json().error.request_id, "timer-run-1")
        const [queued] = yield* sql<{ state: string }>`SELECT state FROM runs WHERE organization_id = ${organization.organizationId}`
        assert.strictEqual(queued!.state, "pending", "its settlement had not run when the caller was answered")

        yield* lock.release
        const blocked = yield* Fiber.join(blocking)
        assert.strictEqual(blocked.status, 200, "a settlement under way at the deadline is waited for")
        const [run] = yield* sql<{ state: string; error_code: string | null; held: boolean; cost_micros: number; billed: boolean }>`
          SELECT r.state, r.error_code, r.held, r.cost_micros,
            (SELECT bool_and(l.billed) FROM ledger_entries l WHERE l.run_id = r.id) AS billed
          FROM runs r WHERE r.organization_id = ${organization.organizationId}`.pipe(
          Effect.filterOrFail((rows) => rows[0]!.state !== "pending"),
          Effect.retry(poll)
        )
        assert.strictEqual(run!.state, "failed", "the caller was told 504: never stored completed")
        assert.strictEqual(run!.error_code, "deadline_exceeded")
        assert.isFalse(run!.held)
        assert.isTrue(run!.billed)
        assert.isAbove(run!.cost_micros, 0, "the model's answer is billed")
        yield* assertMoneyInvariants
      }))
  })
})
