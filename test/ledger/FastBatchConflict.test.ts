/**
 * A fast admission batch that PostgreSQL rolls back to break a conflict with another transaction (a deadlock, 40P01,
 * or a serialization failure, 40001) stored nothing: its runs go the exact way and run, instead of being answered
 * `503 database_unavailable` for a database that is up. The conflict is made by a trigger that refuses, with the
 * deadlock's SQLSTATE, the insert of a chosen run only when it comes from a lease (the fast way; the exact way
 * stores runs outside leases).
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { assertMoneyInvariants, grantCredit } from "../support/Invariants.js"
import { oneQuestion, postRun } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerLive } from "../support/TestServer.js"

const installConflictTrigger = (state: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`CREATE OR REPLACE FUNCTION test_fast_conflict() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.lease_id IS NOT NULL AND NEW.idempotency_key LIKE 'conflict-%' THEN
          RAISE EXCEPTION 'simulated conflict' USING ERRCODE = '${state}';
        END IF;
        RETURN NEW;
      END $$`)
    yield* sql.unsafe(`CREATE OR REPLACE TRIGGER test_fast_conflict BEFORE INSERT ON runs
      FOR EACH ROW EXECUTE FUNCTION test_fast_conflict()`)
  })

const dropConflictTrigger = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.orDie(sql.unsafe("DROP TRIGGER IF EXISTS test_fast_conflict ON runs")))

/** Waits until this process holds a lease of the organization (its background top-up after a first run). */
const leaseGranted = (organizationId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ leases: number }>`SELECT count(*)::int AS leases FROM ledger_leases
      WHERE organization_id = ${organizationId} AND NOT revoked AND credit_micros > credit_held`.pipe(
      Effect.map((rows) => rows[0]!.leases),
      Effect.repeat({ schedule: Schedule.spaced("50 millis"), until: (leases) => leases > 0 }),
      Effect.timeout("10 seconds")
    ))

layer(TestServerLive(), { excludeTestServices: true, timeout: "120 seconds" })("fast admission conflicts", (it) => {
  describe("a fast batch rolled back for a conflict", () => {
    for (const [name, state] of [["a deadlock", "40P01"], ["a serialization failure", "40001"]] as const) {
      it.effect(`${name} (${state}): its run goes the exact way and runs; nothing is held or charged twice`, () =>
        Effect.gen(function*() {
          const organization = yield* seedOrganization({ billing: true })
          yield* grantCredit(organization.organizationId, 10_000_000)
          assert.strictEqual((yield* postRun(organization.secret, oneQuestion())).status, 200, "a first run")
          yield* leaseGranted(organization.organizationId)
          yield* installConflictTrigger(state)
          const key = `conflict-${state}-${Date.now()}`
          const response = yield* postRun(organization.secret, oneQuestion(), key).pipe(Effect.ensuring(dropConflictTrigger))
          assert.strictEqual(response.status, 200, response.text)
          const sql = yield* SqlClient.SqlClient
          const [stored] = yield* sql<{ runs: number; lease: string | null; state: string }>`SELECT count(*)::int AS runs,
              max(lease_id::text) AS lease, max(state) AS state
            FROM runs WHERE organization_id = ${organization.organizationId} AND idempotency_key = ${key}`
          assert.deepStrictEqual(stored, { runs: 1, lease: null, state: "completed" }, "stored once, the exact way")
          yield* assertMoneyInvariants
        }))
    }
  })
})
