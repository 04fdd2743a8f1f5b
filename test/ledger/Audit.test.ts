/**
 * The ledger's audit (src/ledger/Audit.ts) through the operator CLI's `ledger audit`, against a running server's
 * database: a healthy ledger passes with a run in flight (its hold counted, no rule broken) and after it; a broken
 * rule exits 1, names the rule and the rows on stdout and stderr, and `--org` audits one organization alone; a run
 * holding long past its deadline and autovacuum off are warned about without failing the audit.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Fiber, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { runCli, runCliWith } from "../support/Cli.js"
import { FakeUpstream } from "../support/FakeUpstream.js"
import { grantCredit } from "../support/Invariants.js"
import { freshKey, oneQuestion, postRun } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { adminQuery, databaseMode, postgresUrl } from "../support/TestDatabase.js"
import { TestServerWithUpstreamLive } from "../support/TestServer.js"

const audit = (...args: ReadonlyArray<string>) => runCli(["ledger", "audit", ...args])

const brokenRules = (report: any): ReadonlyArray<string> =>
  report.checks.filter((check: any) => check.violations > 0).map((check: any) => check.name).sort()

/** An organization with billing and credit, and two runs settled. */
const organizationWithRuns = Effect.gen(function*() {
  const organization = yield* seedOrganization({ billing: true })
  yield* grantCredit(organization.organizationId, 50_000_000)
  for (let i = 0; i < 2; i++) {
    const response = yield* postRun(organization.secret, oneQuestion())
    assert.strictEqual(response.status, 200, response.text)
  }
  return organization
})

layer(TestServerWithUpstreamLive(), { excludeTestServices: true, timeout: "90 seconds" })("ledger audit", (it) => {
  describe("a healthy ledger", () => {
    it.effect("passes with a run in flight and after it, its hold counted and no rule broken", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const upstream = yield* FakeUpstream
        const organization = yield* organizationWithRuns
        yield* upstream.hold
        const key = freshKey()
        const run = yield* Effect.forkChild(postRun(organization.secret, oneQuestion(), key))
        yield* sql`SELECT 1 FROM runs WHERE organization_id = ${organization.organizationId} AND idempotency_key = ${key}
          AND held`.pipe(
          Effect.filterOrFail((rows) => rows.length === 1),
          Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo({ duration: "10 seconds" })))
        )
        const during = yield* audit()
        assert.strictEqual(during.code, 0, during.stderr)
        const report = during.json()
        assert.strictEqual(report.ok, true)
        assert.strictEqual(report.organization_id, null)
        assert.deepStrictEqual(report.checks.map((check: any) => [check.name, check.violations, check.examples]), [
          ["balance_equals_transactions", 0, []],
          ["usage_equals_captured_costs", 0, []],
          ["leases_within_balance", 0, []],
          ["quota_equals_runs", 0, []],
          ["run_cost_equals_billed_calls", 0, []],
          ["key_counters_equal_runs", 0, []],
          ["calls_name_run_key", 0, []]
        ])
        assert.strictEqual(report.in_flight.runs_holding, 1)
        assert.isAtLeast(report.in_flight.holders, 1)
        assert.isAtLeast(report.organizations, 1)

        yield* upstream.release
        const response = yield* Fiber.join(run)
        assert.strictEqual(response.status, 200, response.text)
        const after = yield* audit("--org", organization.organizationId)
        assert.strictEqual(after.code, 0, after.stderr)
        assert.strictEqual(after.json().organization_id, organization.organizationId)
        assert.strictEqual(after.json().organizations, 1)
        const { leases_holding, runs_holding, runs_holding_past_deadline, unbilled_calls } = after.json().in_flight
        assert.deepStrictEqual(
          { runs_holding, runs_holding_past_deadline, unbilled_calls, leases_holding },
          { runs_holding: 0, runs_holding_past_deadline: 0, unbilled_calls: 0, leases_holding: 0 }
        )
      }))
  })

  describe("a broken rule", () => {
    it.effect("exits 1, names the rule and its rows; --org audits one organization alone", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const first = yield* organizationWithRuns
        const second = yield* organizationWithRuns
        const [account] = yield* sql<{ balance_micros: number }>`UPDATE credit_accounts
          SET balance_micros = balance_micros + 7 WHERE organization_id = ${first.organizationId}
          RETURNING balance_micros`
        const broken = yield* audit()
        assert.strictEqual(broken.code, 1)
        assert.include(broken.stderr, "the ledger breaks 1 rule(s): balance_equals_transactions (1 row(s))")
        const report = broken.json()
        assert.strictEqual(report.ok, false)
        assert.deepStrictEqual(brokenRules(report), ["balance_equals_transactions"])
        assert.deepStrictEqual(report.checks[0].examples, [{
          organization_id: first.organizationId,
          balance_micros: account!.balance_micros,
          transactions_micros: account!.balance_micros - 7
        }])
        const other = yield* audit("--org", second.organizationId)
        assert.strictEqual(other.code, 0, other.stderr)
        assert.strictEqual(other.json().ok, true)

        // One run's cost changed without its calls: the run, its period's quota, the captured costs and its key's
        // counters no longer agree.
        const [run] = yield* sql<{ id: string }>`UPDATE runs SET cost_micros = cost_micros + 1
          WHERE id = (SELECT id FROM runs WHERE organization_id = ${second.organizationId} LIMIT 1) RETURNING id::text`
        const four = yield* audit("--org", second.organizationId)
        assert.strictEqual(four.code, 1)
        assert.deepStrictEqual(brokenRules(four.json()), [
          "key_counters_equal_runs",
          "quota_equals_runs",
          "run_cost_equals_billed_calls",
          "usage_equals_captured_costs"
        ])
        const byRun = four.json().checks.find((check: any) => check.name === "run_cost_equals_billed_calls")
        assert.strictEqual(byRun.violations, 1)
        assert.strictEqual(byRun.examples[0].run_id, run!.id)
        assert.strictEqual(byRun.examples[0].cost_micros, byRun.examples[0].billed_micros + 1)

        yield* sql`UPDATE runs SET cost_micros = cost_micros - 1 WHERE id = ${run!.id}`
        yield* sql`UPDATE credit_accounts SET balance_micros = balance_micros - 7 WHERE organization_id = ${first.organizationId}`
        const mended = yield* audit()
        assert.strictEqual(mended.code, 0, mended.stderr)
      }))
  })

  describe("warnings", () => {
    it.effect("a run holding long past its deadline, and autovacuum off, are warned about without failing", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const upstream = yield* FakeUpstream
        const organization = yield* organizationWithRuns
        yield* upstream.hold
        const key = freshKey()
        const run = yield* Effect.forkChild(postRun(organization.secret, oneQuestion(), key))
        // Its stored deadline moved ten minutes back, as a run whose settlement kept failing would look.
        yield* sql`UPDATE runs SET deadline_at = now() - interval '10 minutes'
          WHERE organization_id = ${organization.organizationId} AND idempotency_key = ${key} AND held
          RETURNING id`.pipe(
          Effect.filterOrFail((rows) => rows.length === 1),
          Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo({ duration: "10 seconds" })))
        )
        const [setting] = yield* sql<{ autovacuum: string }>`SELECT current_setting('autovacuum') AS autovacuum`
        const warned = yield* audit("--org", organization.organizationId)
        assert.strictEqual(warned.code, 0, warned.stderr)
        const report = warned.json()
        assert.strictEqual(report.ok, true)
        assert.strictEqual(report.in_flight.runs_holding_past_deadline, 1)
        assert.deepStrictEqual(
          report.warnings.map((warning: string) => warning.slice(0, 40)),
          [
            "1 run(s) still hold more than 300 s past",
            ...(setting!.autovacuum === "off" ? ["autovacuum is off: nothing removes the d"] : [])
          ]
        )
        yield* upstream.release
        const response = yield* Fiber.join(run)
        assert.strictEqual(response.status, 200, response.text)
        const after = yield* audit("--org", organization.organizationId)
        assert.strictEqual(after.json().in_flight.runs_holding_past_deadline, 0)
      }))
  })

  describe.skipIf(databaseMode() !== "postgres")("a database not migrated (PostgreSQL)", () => {
    it.effect("exits 1 with PostgreSQL's words and the way out, printing no report", () =>
      Effect.acquireUseRelease(
        Effect.sync(() => `arbiter_audit_${randomBytes(6).toString("hex")}`).pipe(
          Effect.tap((name) => adminQuery(`CREATE DATABASE ${name}`))
        ),
        (name) =>
          Effect.gen(function*() {
            const url = new URL(postgresUrl())
            url.pathname = `/${name}`
            const result = yield* runCliWith({ DATABASE_URL: url.toString() }, ["ledger", "audit"])
            assert.strictEqual(result.code, 1)
            assert.strictEqual(result.stdout, "")
            assert.include(result.stderr, "could not audit the ledger: relation \"credit_accounts\" does not exist")
            assert.include(result.stderr, "`arbiter migrate` applies the migrations")
          }),
        (name) => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).pipe(Effect.ignore)
      ))
  })
})
