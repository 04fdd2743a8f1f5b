/**
 * The usage routes' query plans at volume, on PostgreSQL: a fresh database (BENCH_DATABASE_URL, see
 * support/BenchDatabase.ts) with BENCH_USAGE_ORGS organizations (default 4) of BENCH_USAGE_RUNS runs each (default
 * 1,000,000) created over a year, one ledger entry per settled run; then `EXPLAIN (ANALYZE, BUFFERS)` of each usage
 * statement for one organization over the previous full UTC month and the current one (the routes' default window).
 * Prints the plans and their execution times; nothing is asserted (test/usage/UsagePlans.test.ts asserts the shapes).
 * Run: `node --import tsx bench/usage-plans.ts`.
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { migrate } from "../src/db/Migrations.js"
import { pgClientLayer } from "../src/db/PgPool.js"
import { monthOf, type Window } from "../src/usage/Window.js"
import { explainUsage, seedUsageVolume, volumeOrganization } from "../test/support/UsagePlans.js"
import { createBenchDatabase } from "./support/BenchDatabase.js"

const organizations = Number(process.env.BENCH_USAGE_ORGS ?? 4)
const runsPerOrganization = Number(process.env.BENCH_USAGE_RUNS ?? 1_000_000)

const executionMs = (text: string): string => /Execution Time: ([\d.]+) ms/.exec(text)?.[1] ?? "?"

const explainWindow = (label: string, window: Window, runId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [count] = yield* sql<{ runs: string }>`SELECT count(*)::text AS runs FROM runs
      WHERE organization_id = ${volumeOrganization(0)} AND created_at >= ${window.start.toISOString()}::timestamptz
        AND created_at < ${window.end.toISOString()}::timestamptz`
    console.log(`\n==== ${label}: ${window.start.toISOString()} to ${window.end.toISOString()}, ${count!.runs} runs of the organization in it\n`)
    for (const query of yield* explainUsage(volumeOrganization(0), window, runId, { analyze: true })) {
      console.log(`-- ${query.name}: ${executionMs(query.text)} ms\n${query.text}\n`)
    }
  })

const main = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* migrate()
  const started = Date.now()
  const now = new Date()
  yield* seedUsageVolume({ organizations, runsPerOrganization, chunk: 200_000 }, now)
  const [sizes] = yield* sql<{ runs: string; ledger: string }>`SELECT
    (SELECT count(*) FROM runs)::text AS runs, (SELECT count(*) FROM ledger_entries)::text AS ledger`
  console.log(`seeded ${sizes!.runs} runs and ${sizes!.ledger} ledger entries over ${organizations} organizations ` +
    `in ${((Date.now() - started) / 1000).toFixed(1)} s (vacuumed and analyzed)`)
  const [run] = yield* sql<{ id: string }>`SELECT id::text FROM runs WHERE organization_id = ${volumeOrganization(0)} LIMIT 1`
  const current = monthOf(now)
  yield* explainWindow("previous UTC month", monthOf(new Date(current.start.getTime() - 1)), run!.id)
  yield* explainWindow("current UTC month (the default window)", current, run!.id)
})

const database = await createBenchDatabase()
try {
  await Effect.runPromise(
    main.pipe(Effect.provide(Layer.orDie(pgClientLayer({ url: database.url }, { max: 1 }))))
  )
} finally {
  await database.drop()
}
