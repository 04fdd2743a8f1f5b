/**
 * Money under concurrency: 200 concurrent runs on an organization whose credit covers exactly N ceilings admit
 * exactly N; one idempotency key sent concurrently, to one server or to two independent servers (real processes on
 * PostgreSQL) sharing the database, creates one run and one charge; the invariants hold after each.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../../src/config/AppConfig.js"
import { ServerAddress } from "../../src/server/Listen.js"
import { startNode } from "../../bench/support/Processes.js"
import { FakeUpstream, heldBurst } from "../support/FakeUpstream.js"
import { assertMoneyInvariants, grantCredit } from "../support/Invariants.js"
import { rawRequest } from "../support/RawHttp.js"
import { freshKey, oneQuestion, postRun } from "../support/Runs.js"
import { startSecondServer } from "../support/SecondServer.js"
import { seedOrganization } from "../support/Seed.js"
import { databaseMode } from "../support/TestDatabase.js"
import { TestServerWithUpstreamLive } from "../support/TestServer.js"

const tally = (statuses: ReadonlyArray<number>) =>
  statuses.reduce<Record<number, number>>((counts, status) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }), {})

const runsOf = (organizationId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ runs: number; calls: number; cost: number; balance: number }>`SELECT
      (SELECT count(*)::int FROM runs WHERE organization_id = ${organizationId}) AS runs,
      (SELECT count(*)::int FROM ledger_entries WHERE organization_id = ${organizationId}) AS calls,
      (SELECT COALESCE(sum(cost_micros), 0)::bigint FROM runs WHERE organization_id = ${organizationId}) AS cost,
      (SELECT balance_micros FROM credit_accounts WHERE organization_id = ${organizationId}) AS balance`)

const sendTo = (url: string, secret: string, key: string) =>
  rawRequest(url, {
    method: "POST",
    path: "/v1/runs",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify(oneQuestion())
  })

layer(TestServerWithUpstreamLive(), { excludeTestServices: true, timeout: "180 seconds" })("money under concurrency", (it) => {
  describe("credit", () => {
    it.effect("200 concurrent runs with credit for exactly 37 ceilings: exactly 37 admitted, 163 refused 402", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, 37 * 20_000)
        const { held, responses } = yield* heldBurst(
          Array.from({ length: 200 }, () => postRun(organization.secret, oneQuestion(), freshKey()))
        )
        assert.strictEqual(held, 37, "exactly 37 runs reached the model while the burst was held")
        assert.deepStrictEqual(tally(responses.map((response) => response.status)), { 200: 37, 402: 163 })
        const totals = (yield* runsOf(organization.organizationId))[0]!
        assert.strictEqual(totals.runs, 37)
        assert.strictEqual(totals.calls, 37)
        assert.strictEqual(totals.balance, 37 * 20_000 - totals.cost)
        yield* assertMoneyInvariants
      }))

    it.effect("runs of six organizations batched together: each admits exactly what its own credit covers", () =>
      Effect.gen(function*() {
        const ceilings = [1, 2, 3, 5, 8, 13]
        const organizations = yield* Effect.forEach(ceilings, (count) =>
          Effect.tap(seedOrganization({ billing: true }), (organization) =>
            grantCredit(organization.organizationId, count * 20_000)))
        const requests = organizations.flatMap((organization) => Array.from({ length: 20 }, () => organization))
        const burst = yield* heldBurst(requests.map((organization) => postRun(organization.secret, oneQuestion(), freshKey())))
        const covered = ceilings.reduce((sum, ceilingCount) => sum + ceilingCount, 0)
        assert.strictEqual(burst.held, covered, "exactly the covered runs reached the model while the burst was held")
        const responses = burst.responses.map((response, index) => ({ organization: requests[index]!, response }))
        for (const [index, organization] of organizations.entries()) {
          const statuses = responses.filter((answer) => answer.organization === organization).map((answer) => answer.response.status)
          assert.deepStrictEqual(tally(statuses), { 200: ceilings[index]!, 402: 20 - ceilings[index]! })
          const totals = (yield* runsOf(organization.organizationId))[0]!
          assert.strictEqual(totals.runs, ceilings[index])
          assert.strictEqual(totals.balance, ceilings[index]! * 20_000 - totals.cost)
        }
        yield* assertMoneyInvariants
      }))
  })

  describe("one idempotency key, sent concurrently", () => {
    it.effect("to one server: one run, one charge; the others replay it", () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        const address = yield* ServerAddress
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, 100_000)
        yield* upstream.setLatency(300)
        const key = freshKey()
        const responses = yield* Effect.forEach(Array.from({ length: 20 }), () => sendTo(address.url, organization.secret, key), { concurrency: "unbounded" })
        yield* upstream.setLatency(0)
        const statuses = tally(responses.map((response) => response.status))
        assert.strictEqual((statuses[200] ?? 0) + (statuses[202] ?? 0), 20, JSON.stringify(statuses))
        const ids = new Set(responses.map((response) => response.json().run_id))
        assert.strictEqual(ids.size, 1)
        assert.strictEqual(responses.filter((response) => response.json().replayed === false).length, 1)
        const totals = (yield* runsOf(organization.organizationId))[0]!
        assert.deepStrictEqual([totals.runs, totals.calls], [1, 1])
        yield* assertMoneyInvariants
      }))

    it.effect("to two independent servers sharing the database: one run, one charge", () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        const address = yield* ServerAddress
        const config = yield* AppConfig
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, 100_000)
        const urls: Array<string> = []
        if (databaseMode() === "postgres") {
          const env = {
            DATABASE_URL: Redacted.value(Option.getOrThrow(config.databaseUrl)),
            BILLING_PROVIDER: "local",
            WORKERS: "1",
            DECISION_PROVIDER: "openai",
            DECISION_PROVIDER_URL: upstream.url,
            DECISION_PROVIDER_MODEL: "judge-7b",
            LOG_LEVEL: "warn",
            // As the in-process test server: the test is about one key, not about shedding a lagging fresh process.
            OVERLOAD_MAX_LAG_MS: "0"
          }
          for (let i = 0; i < 2; i++) {
            const child = yield* Effect.acquireRelease(Effect.promise(() => startNode("src/main.ts", env)), (server) => Effect.promise(server.stop))
            urls.push(child.url)
          }
        } else {
          urls.push(address.url, yield* startSecondServer)
        }
        yield* upstream.setLatency(200)
        const key = freshKey()
        const responses = yield* Effect.forEach(
          Array.from({ length: 30 }, (_, i) => urls[i % 2]!),
          (url) => sendTo(url, organization.secret, key),
          { concurrency: "unbounded" }
        )
        yield* upstream.setLatency(0)
        assert.isTrue(responses.every((response) => response.status === 200 || response.status === 202), JSON.stringify(tally(responses.map((r) => r.status))))
        assert.strictEqual(new Set(responses.map((response) => response.json().run_id)).size, 1)
        const totals = (yield* runsOf(organization.organizationId))[0]!
        assert.deepStrictEqual([totals.runs, totals.calls], [1, 1])
        assert.strictEqual(totals.balance, 100_000 - totals.cost)
        yield* assertMoneyInvariants
      }).pipe(Effect.scoped))
  })
})
