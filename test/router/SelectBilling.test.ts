/**
 * A selection is billed as one decision run (spec, Model Router) and replays for free (spec, "Idempotent replay of
 * a selection"): one charge with one ledger row per model call, the run readable through the run routes, the same
 * key and body replaying the stored selection with `replayed` true, another body `409 idempotency_conflict`, no key
 * a new run each time, the admission refusals (402, 429) storing nothing, and a selection whose storing was lost
 * rebuilt from its settled run without a second charge. The money invariants hold after each.
 */
import { SqlClient } from "effect/sql"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { estimateLatencyMs } from "../../src/router/Estimates.js"
import { QuotaLedger } from "../../src/ledger/QuotaLedger.js"
import { call, codeOf } from "../support/Api.js"
import { FakeUpstream } from "../support/FakeUpstream.js"
import { assertMoneyInvariants, grantCredit } from "../support/Invariants.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerWithUpstreamLive } from "../support/TestServer.js"
import { realCatalog, realTaxonomy } from "./fixtures/RouterFixtures.js"
import { classifierResponder, postSelect, routerCounts } from "./fixtures/Select.js"

const task = {
  prompt: "Prove that the square root of 2 is irrational, step by step.",
  policy: "cost_efficient",
  models: { max_price_per_mtok: 10 }
}

const billedOrganization = (credit: number) =>
  Effect.gen(function*() {
    const upstream = yield* FakeUpstream
    yield* upstream.reset
    yield* upstream.respondWith(classifierResponder({ family: [0.2, 0.8], taskTypes: { coding: [1], math: [0.1, 0.1, 0.8] } }))
    const organization = yield* seedOrganization({ billing: true })
    if (credit > 0) yield* grantCredit(organization.organizationId, credit)
    return organization
  })

layer(TestServerWithUpstreamLive(), { excludeTestServices: true, timeout: "120 seconds" })("router billing", (it) => {
  describe("POST /v1/router/select > 200 billed", () => {
    it.effect("one charge: usage and cost of the classification run, one ledger row per call, readable as a run", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* billedOrganization(1_000_000)
        const response = yield* postSelect(secret, task, "billed-1")
        assert.strictEqual(response.status, 200, response.text)
        assert.match(String(response.headers["server-timing"]), /admit;dur=[\d.]+, upstream;dur=[\d.]+, gateway;dur=[\d.]+, total;dur=/)
        const selection = response.json()
        assert.match(selection.run_id, /^run_[0-9a-f]{32}$/)
        const hex = selection.run_id.slice(4)
        assert.strictEqual(selection.id, `rtr_${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`)
        assert.isFalse(selection.replayed)
        assert.strictEqual(selection.decision_model, "decision-1")
        assert.strictEqual(selection.score_basis, "benchmarks")
        assert.strictEqual(selection.policy, "cost_efficient")
        const sql = yield* SqlClient.SqlClient
        const ledger = yield* sql<{ input_tokens: number; output_tokens: number; cost_micros: number; status: string }>`
          SELECT input_tokens, output_tokens, cost_micros, status FROM ledger_entries WHERE organization_id = ${organizationId}`
        const upstream = yield* FakeUpstream
        assert.strictEqual(ledger.length, (yield* upstream.requests).length, "one ledger row per model call")
        assert.isTrue(ledger.every((row) => row.status === "succeeded"))
        const sum = (pick: (row: (typeof ledger)[number]) => number) => ledger.reduce((total, row) => total + pick(row), 0)
        assert.deepStrictEqual(selection.usage, { input_tokens: sum((row) => row.input_tokens), output_tokens: sum((row) => row.output_tokens) })
        assert.strictEqual(selection.cost_micros, sum((row) => row.cost_micros))
        assert.isAbove(selection.cost_micros, 0)
        assert.deepStrictEqual(yield* routerCounts(organizationId), {
          runs: 1,
          calls: ledger.length,
          selections: 1,
          balance: 1_000_000 - selection.cost_micros
        })
        const run = yield* call("GET", `/v1/runs/${selection.run_id}`, { secret })
        assert.strictEqual(run.status, 200)
        assert.strictEqual(run.json().state, "completed")
        assert.deepStrictEqual(run.json().usage, selection.usage)
        assert.strictEqual(run.json().cost_micros, selection.cost_micros)
        assert.strictEqual(run.json().decision.answers.family.choice, "math")
        yield* assertMoneyInvariants
      }))
  })

  describe("POST /v1/router/select > idempotency", () => {
    it.effect("the same key and body replay the stored selection with replayed true and no charge", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* billedOrganization(1_000_000)
        const first = (yield* postSelect(secret, task, "replay-1")).json()
        const before = yield* routerCounts(organizationId)
        const requestsBefore = (yield* (yield* FakeUpstream).requests).length
        // null fields and the explicit default latency are the same body
        const replay = yield* postSelect(secret, { ...task, domain: null, latency: "standard" }, "replay-1")
        assert.strictEqual(replay.status, 200)
        assert.deepStrictEqual(replay.json(), { ...first, replayed: true })
        assert.deepStrictEqual(yield* routerCounts(organizationId), before)
        assert.strictEqual((yield* (yield* FakeUpstream).requests).length, requestsBefore, "no model call on a replay")
        yield* (yield* QuotaLedger).setLimits(organizationId, { spendLimitMicros: 0, tokenLimit: 0 })
        const limited = yield* postSelect(secret, task, "replay-1")
        assert.strictEqual(limited.status, 200, "a replay is never refused by the quota")
        yield* assertMoneyInvariants
      }))

    it.effect("another body with the same key is 409 idempotency_conflict, and nothing is charged", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* billedOrganization(1_000_000)
        assert.strictEqual((yield* postSelect(secret, task, "conflict-1")).status, 200)
        const before = yield* routerCounts(organizationId)
        for (const other of [{ ...task, policy: "capability_heavy" }, { ...task, models: { max_price_per_mtok: 9 } }, { ...task, prompt: "Other." }]) {
          const response = yield* postSelect(secret, other, "conflict-1")
          assert.strictEqual(response.status, 409)
          assert.strictEqual(codeOf(response), "idempotency_conflict")
        }
        assert.deepStrictEqual(yield* routerCounts(organizationId), before)
        const runsKey = yield* call("POST", "/v1/runs", {
          secret,
          body: { kind: "decision", state: "x", questions: { q: { type: "noul", instructions: "Is it x?" } } },
          headers: { "idempotency-key": "conflict-1" }
        })
        assert.strictEqual(runsKey.status, 200, "POST /v1/runs keys live in their own namespace")
      }))

    it.effect("without a key every select is a new run and a new charge", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* billedOrganization(1_000_000)
        const first = (yield* postSelect(secret, task)).json()
        const second = (yield* postSelect(secret, task)).json()
        assert.notStrictEqual(first.run_id, second.run_id)
        assert.isFalse(second.replayed)
        const counts = yield* routerCounts(organizationId)
        assert.strictEqual(counts.runs, 2)
        assert.strictEqual(counts.balance, 1_000_000 - first.cost_micros - second.cost_micros)
        yield* assertMoneyInvariants
      }))

    it.effect("a settled classification whose selection was not stored is ranked again on replay, without a charge", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* billedOrganization(1_000_000)
        const first = (yield* postSelect(secret, task, "lost-1")).json()
        const sql = yield* SqlClient.SqlClient
        yield* sql`DELETE FROM router_selections WHERE organization_id = ${organizationId}`
        const before = yield* routerCounts(organizationId)
        const replay = yield* postSelect(secret, task, "lost-1")
        assert.strictEqual(replay.status, 200)
        assert.deepStrictEqual(replay.json(), { ...first, replayed: true })
        assert.deepStrictEqual(yield* routerCounts(organizationId), { ...before, selections: 1 })
        yield* assertMoneyInvariants
      }))
  })

  describe("POST /v1/router/select > admission refusals", () => {
    it.effect("402 insufficient_credits and 429 quota store nothing; the key stays usable", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* billedOrganization(0)
        const broke = yield* postSelect(secret, task, "refused-1")
        assert.strictEqual(broke.status, 402)
        assert.strictEqual(codeOf(broke), "insufficient_credits")
        assert.deepStrictEqual(yield* routerCounts(organizationId), { runs: 0, calls: 0, selections: 0, balance: 0 })
        yield* grantCredit(organizationId, 100_000)
        yield* (yield* QuotaLedger).setLimits(organizationId, { spendLimitMicros: 10_000, tokenLimit: null })
        const capped = yield* postSelect(secret, task, "refused-1")
        assert.strictEqual(capped.status, 429)
        assert.strictEqual(codeOf(capped), "organization_spend_quota_exhausted")
        assert.strictEqual((yield* routerCounts(organizationId)).runs, 0)
        yield* (yield* QuotaLedger).setLimits(organizationId, { spendLimitMicros: null, tokenLimit: null })
        assert.strictEqual((yield* postSelect(secret, task, "refused-1")).status, 200)
        yield* assertMoneyInvariants
      }))
  })

  describe("POST /v1/router/select > 400 no_eligible_model after the classification", () => {
    it.effect("a max_latency_ms too tight for the classified task: billed once, the refusal replayed for free", () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        const { organizationId, secret } = yield* billedOrganization(1_000_000)
        // agentic.professional_workflows (6,000 answer tokens); the bound fits only the shortest task type's answer
        yield* upstream.respondWith(classifierResponder({ family: [0, 0, 0, 0, 1], taskTypes: { agentic: [0, 0, 1, 0] } }))
        const measured = realCatalog.models.filter((model) => !model.latencyEstimated)
        const fastest = (tokens: number) => Math.min(...measured.map((model) => estimateLatencyMs(model, tokens)))
        const shortest = Math.min(...realTaxonomy.taskTypes.map((type) => type.expectedOutputTokens))
        const bound = fastest(shortest) + 1
        assert.isBelow(bound, fastest(6_000), "the bound must be too tight for 6,000 answer tokens")
        const body = { prompt: "Prepare the quarterly board pack from these spreadsheets.", max_latency_ms: bound }
        const first = yield* postSelect(secret, body, "tight-1")
        assert.strictEqual(first.status, 400)
        assert.strictEqual(codeOf(first), "no_eligible_model")
        assert.include(first.json().error.message, "max_latency_ms removed")
        assert.include(first.json().error.message, "agentic.professional_workflows")
        const charged = yield* routerCounts(organizationId)
        assert.strictEqual(charged.runs, 1)
        assert.isBelow(charged.balance, 1_000_000, "the classification happened and is billed")
        const replay = yield* postSelect(secret, body, "tight-1")
        assert.strictEqual(replay.status, 400)
        assert.strictEqual(replay.json().error.message, first.json().error.message)
        assert.deepStrictEqual(yield* routerCounts(organizationId), charged)
        yield* assertMoneyInvariants
      }))
  })
})
