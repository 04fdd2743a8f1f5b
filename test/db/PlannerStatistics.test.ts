/**
 * The statistics keeper (src/db/PlannerStatistics.ts) on both databases: a plan a connection cached while `runs` was
 * empty (the idempotency lookup on `runs_usage`, reading every run of the organization) is planned again on the
 * unique `runs_idempotency` once the table has grown and the keeper has analyzed it; a table that has not grown since
 * is left alone. Without the keeper (autovacuum is off on the test machines, and absent from the embedded database)
 * the cached plan stays on `runs_usage`. Two rounds at once (two processes) analyze a grown table once: the one that
 * gets the lock second looks the stale tables up again under it (on the embedded database, where connections take
 * turns, both got it and analyzed `runs` twice before that).
 */
import * as SqlClient from "effect/sql/SqlClient"
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, References } from "effect"
import { PgPools } from "../../src/db/PgPool.js"
import { refreshStatistics } from "../../src/db/PlannerStatistics.js"
import { DatabaseLive } from "../../src/db/Sql.js"
import { testConfigLayer } from "../support/TestServer.js"

const DatabaseOnlyLive = DatabaseLive.pipe(
  Layer.provideMerge(testConfigLayer()),
  Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))
)

/** The admission's idempotency lookup, as Admission.ts writes it: a lateral lookup per requested run. */
const lookup = `PREPARE planner_stats_lookup(json) AS SELECT r.i, x.id FROM json_to_recordset($1) AS r(i int, org text, origin text, key text)
  CROSS JOIN LATERAL (SELECT id FROM runs
    WHERE runs.organization_id = r.org AND runs.origin = r.origin AND runs.idempotency_key = r.key LIMIT 1) x`
const argument = `'[{"i":1,"org":"org_stats","origin":"runs","key":"k-5"}]'`

const seedRuns = `INSERT INTO runs (id, organization_id, origin, idempotency_key, kind, state, input_digest, input_tokens,
    output_tokens, cost_micros, period, hold_micros, hold_tokens, hold_credit, held, deadline_at, created_at, settled_at)
  SELECT gen_random_uuid(), 'org_stats', 'runs', 'k-' || g, 'decision', 'completed', repeat('0', 64), 1000, 1, 43,
    date_trunc('month', now())::date, 20000, 1200, false, false, now() + interval '30 seconds',
    now() - g * interval '1 second', now()
  FROM generate_series(1, 3000) g`

layer(DatabaseOnlyLive, { excludeTestServices: true, timeout: "120 seconds" })("planner statistics", (it) => {
  it.effect("a lookup planned on an empty runs table is planned on its unique index once the table grew and was analyzed", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { main } = yield* PgPools
      yield* sql`INSERT INTO organizations (id, name) VALUES ('org_stats', 'Statistics')`
      const plan = yield* Effect.acquireUseRelease(
        Effect.promise(() => main.connect()),
        (client) =>
          Effect.gen(function*() {
            yield* Effect.promise(() => client.query(lookup))
            // Custom plans first, then the generic one the connection keeps: all while runs is empty.
            for (let i = 0; i < 7; i++) yield* Effect.promise(() => client.query(`EXECUTE planner_stats_lookup(${argument})`))
            yield* Effect.promise(() => client.query(seedRuns))
            const analyzed = yield* refreshStatistics
            assert.include(analyzed, "runs")
            assert.deepStrictEqual(yield* refreshStatistics, [], "nothing grew since")
            const explained = yield* Effect.promise(() => client.query(`EXPLAIN EXECUTE planner_stats_lookup(${argument})`))
            return explained.rows.map((row: Record<string, string>) => Object.values(row)[0]).join("\n")
          }),
        (client) => Effect.promise(() => client.query("DEALLOCATE planner_stats_lookup").finally(() => client.release()))
      )
      assert.match(plan, /Index Scan using runs_idempotency on runs/, plan)
      assert.notMatch(plan, /runs_usage/, plan)
    }))

  it.effect("two rounds at once analyze a grown table once: the second finds it current under the lock, or the lock taken", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO runs (id, organization_id, origin, idempotency_key, kind, state, input_digest, input_tokens,
          output_tokens, cost_micros, period, hold_micros, hold_tokens, hold_credit, held, deadline_at, created_at, settled_at)
        SELECT gen_random_uuid(), 'org_stats', 'runs', 'again-' || g, 'decision', 'completed', repeat('0', 64), 1000, 1, 43,
          date_trunc('month', now())::date, 20000, 1200, false, false, now() + interval '30 seconds', now(), now()
        FROM generate_series(1, 3000) g`
      const rounds = yield* Effect.all([refreshStatistics, refreshStatistics], { concurrency: "unbounded" })
      assert.strictEqual(rounds.flat().filter((name) => name === "runs").length, 1, JSON.stringify(rounds))
    }))
})
