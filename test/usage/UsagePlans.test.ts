/**
 * The plans of the usage queries over a database holding a year of runs for several organizations: each query reads
 * the organization's window through the index meant for it, and no plan scans `runs` or `ledger_entries`
 * sequentially. The plans are printed (run with `--reporter verbose` to read them); `bench/usage-plans.ts` shows the
 * same plans with timings at millions of runs per organization.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, References } from "effect"
import { SqlClient } from "effect/sql"
import { DatabaseLive } from "../../src/db/Sql.js"
import { monthOf } from "../../src/usage/Window.js"
import { explainUsage, type ExplainedQuery, type PlanNode, scansOf, seedUsageVolume, volumeOrganization } from "../support/UsagePlans.js"
import { testConfigLayer } from "../support/TestServer.js"

const DatabaseOnlyLive = DatabaseLive.pipe(
  Layer.provideMerge(testConfigLayer()),
  Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))
)

const now = new Date()
const organizationId = volumeOrganization(0)

/** Asserts the plan scans `relation` with a `node` over `index`, or over any of `index`'s equals (unique keys alike). */
const uses = (query: ExplainedQuery, node: string, relation: string, index: string | ReadonlyArray<string>) => {
  const indexes: ReadonlyArray<string> = typeof index === "string" ? [index] : index
  assert.isTrue(
    scansOf(query.plan).some((scan) =>
      scan.relation === relation && indexes.includes(scan.index ?? "") && scan.node.includes(node)
    ),
    `${query.name} should use ${node} on ${relation} via ${indexes.join(" or ")}:\n${query.text}`
  )
}

layer(DatabaseOnlyLive, { excludeTestServices: true, timeout: "300 seconds" })("usage query plans", (it) => {
  describe("a year of runs over 20 organizations (60,000 runs, 59,940 ledger entries)", () => {
    it.effect("every usage query reads its window through an index, never a sequential scan of runs or ledger_entries", () =>
      Effect.gen(function*() {
        yield* seedUsageVolume({ organizations: 20, runsPerOrganization: 3_000, chunk: 20_000 }, now)
        const sql = yield* SqlClient.SqlClient
        const [run] = yield* sql<{ id: string }>`SELECT id::text FROM runs WHERE organization_id = ${organizationId} LIMIT 1`
        const explained = yield* explainUsage(organizationId, monthOf(now), run!.id, { analyze: false })
        for (const query of explained) {
          console.log(`-- ${query.name}\n${query.text}\n`)
          for (const scan of scansOf(query.plan)) {
            assert.isFalse(
              scan.node === "Seq Scan" && (scan.relation === "runs" || scan.relation === "ledger_entries"),
              `${query.name} scans ${scan.relation} sequentially:\n${query.text}`
            )
          }
        }
        const [rollup, ledger, daily, perRun] = explained as [ExplainedQuery, ExplainedQuery, ExplainedQuery, ExplainedQuery]
        uses(rollup, "Index Only Scan", "runs", "runs_usage")
        uses(rollup, "Scan", "runs", "runs_pending")
        uses(ledger, "Index Scan", "ledger_entries", "ledger_entries_newest")
        assert.strictEqual(ledger.plan["Node Type"], "Limit", `the ledger stops at its limit:\n${ledger.text}`)
        uses(daily, "Index Only Scan", "runs", "runs_usage")
        // One row by its unique key: the primary key (id) or the organization's (organization_id, id), migration 0010.
        uses(perRun, "Index Scan", "runs", ["runs_pkey", "runs_organization_run"])
        uses(perRun, "Scan", "ledger_entries", "ledger_entries_run")
      }))

    it.effect("the run list reads runs_usage backwards and stops at its page", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ "QUERY PLAN": ReadonlyArray<{ Plan: PlanNode }> }>`EXPLAIN (FORMAT JSON)
          SELECT id::text, kind, state, input_digest, output_digest FROM runs WHERE organization_id = ${organizationId}
          ORDER BY runs.created_at DESC, runs.id DESC LIMIT 20 OFFSET 40`
        const plan = row!["QUERY PLAN"][0]!.Plan
        const text = JSON.stringify(plan, null, 1)
        assert.strictEqual(plan["Node Type"], "Limit", text)
        const scans = scansOf(plan)
        assert.isTrue(scans.some((scan) => scan.relation === "runs" && scan.index === "runs_usage"), text)
        assert.notMatch(JSON.stringify(plan), /"Node Type":"[^"]*Sort"/, `no sort of the organization's runs:\n${text}`)
      }))
  })
})
