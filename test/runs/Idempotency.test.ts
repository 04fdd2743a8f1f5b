/**
 * Every row of the idempotency table (spec, "Idempotency on POST /v1/runs"): a new key runs; the same key and body
 * replays the stored run (200 settled, 200 failed, 202 pending) with no second charge and no quota or credit check;
 * another body is 409 (after the quota check); a missing or malformed key is refused; a refused run stores nothing.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { QuotaLedger } from "../../src/ledger/QuotaLedger.js"
import { codeOf } from "../support/Api.js"
import { FakeUpstream } from "../support/FakeUpstream.js"
import { assertMoneyInvariants, grantCredit } from "../support/Invariants.js"
import { freshKey, oneQuestion, postRun } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerWithUpstreamLive } from "../support/TestServer.js"

const counts = (organizationId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ runs: number; calls: number; balance: number }>`SELECT
      (SELECT count(*)::int FROM runs WHERE organization_id = ${organizationId}) AS runs,
      (SELECT count(*)::int FROM ledger_entries WHERE organization_id = ${organizationId}) AS calls,
      (SELECT balance_micros FROM credit_accounts WHERE organization_id = ${organizationId}) AS balance`
    return row!
  })

layer(TestServerWithUpstreamLive(), { excludeTestServices: true, timeout: "120 seconds" })("idempotency", (it) => {
  describe("same key, same body", () => {
    it.effect("settled: 200 with the stored run, replayed true, no second call or charge", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, 100_000)
        const key = freshKey()
        const first = yield* postRun(organization.secret, oneQuestion(), key)
        assert.strictEqual(first.status, 200)
        const before = yield* counts(organization.organizationId)
        const replay = yield* postRun(organization.secret, oneQuestion({ deadline_ms: 5_000, max_output_tokens: 7, capability_hint: "fast" }), key)
        assert.strictEqual(replay.status, 200)
        assert.deepStrictEqual(replay.json(), { ...first.json(), replayed: true })
        assert.deepStrictEqual(yield* counts(organization.organizationId), before)
        yield* assertMoneyInvariants
      }))

    it.effect("a replay is never refused by quota or credit", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, 20_000)
        const key = freshKey()
        assert.strictEqual((yield* postRun(organization.secret, oneQuestion(), key)).status, 200)
        yield* (yield* QuotaLedger).setLimits(organization.organizationId, { spendLimitMicros: 0, tokenLimit: 0 })
        const fresh = yield* postRun(organization.secret, oneQuestion())
        assert.strictEqual(fresh.status, 429, "a new run is refused")
        const replay = yield* postRun(organization.secret, oneQuestion(), key)
        assert.strictEqual(replay.status, 200)
        assert.isTrue(replay.json().replayed)
      }))

    it.effect("failed after a call: the first answer is the error, replays are 200 with state failed and the error", () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        const organization = yield* seedOrganization()
        yield* upstream.script({ kind: "noLogprobs" })
        const key = freshKey()
        const first = yield* postRun(organization.secret, oneQuestion(), key)
        assert.strictEqual(first.status, 503)
        assert.strictEqual(codeOf(first), "decision_unavailable")
        const replay = yield* postRun(organization.secret, oneQuestion(), key)
        assert.strictEqual(replay.status, 200)
        const run = replay.json()
        assert.strictEqual(run.state, "failed")
        assert.isTrue(run.replayed)
        assert.strictEqual(run.error.code, "decision_unavailable")
        assert.isAbove(run.cost_micros, 0, "the call that occurred is charged")
        assert.notProperty(run, "decision")
        yield* assertMoneyInvariants
      }))

    it.effect("pending (no call occurred): 202 with the stored run, indefinitely", () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        const organization = yield* seedOrganization()
        yield* upstream.script({ kind: "status", status: 500 }, { kind: "status", status: 500 }, { kind: "status", status: 500 })
        const key = freshKey()
        const first = yield* postRun(organization.secret, oneQuestion(), key)
        assert.strictEqual(first.status, 503)
        assert.strictEqual(codeOf(first), "provider_unavailable")
        for (let i = 0; i < 2; i++) {
          const replay = yield* postRun(organization.secret, oneQuestion(), key)
          assert.strictEqual(replay.status, 202)
          const run = replay.json()
          assert.strictEqual(run.state, "pending")
          assert.isTrue(run.replayed)
          assert.notProperty(run, "cost_micros")
        }
        yield* assertMoneyInvariants
      }))
  })

  describe("same key, different body", () => {
    it.effect("409 idempotency_conflict, after the quota check (429 wins when both apply)", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const key = freshKey()
        assert.strictEqual((yield* postRun(organization.secret, oneQuestion(), key)).status, 200)
        const conflict = yield* postRun(organization.secret, oneQuestion({ state: "something else" }), key)
        assert.strictEqual(conflict.status, 409)
        assert.strictEqual(codeOf(conflict), "idempotency_conflict")
        const drawsDiffer = yield* postRun(organization.secret, oneQuestion({ draws: 2 }), key)
        assert.strictEqual(codeOf(drawsDiffer), "idempotency_conflict")
        const defaultsMatch = yield* postRun(organization.secret, oneQuestion({ draws: 1, think_tokens: 0 }), key)
        assert.strictEqual(defaultsMatch.status, 200, "explicit defaults match an omitted field")
        assert.isTrue(defaultsMatch.json().replayed)
        assert.strictEqual((yield* counts(organization.organizationId)).runs, 1, "conflicts and the replay store nothing")
        yield* (yield* QuotaLedger).setLimits(organization.organizationId, { spendLimitMicros: 10_000, tokenLimit: null })
        const quotaFirst = yield* postRun(organization.secret, oneQuestion({ state: "different again" }), key)
        assert.strictEqual(quotaFirst.status, 429)
        assert.strictEqual(codeOf(quotaFirst), "organization_spend_quota_exhausted")
      }))
  })

  describe("the key itself", () => {
    it.effect("400 idempotency_key_required without it; 400 invalid_idempotency_key when empty, too long or not visible ASCII", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const missing = yield* postRun(organization.secret, oneQuestion(), null)
        assert.strictEqual(missing.status, 400)
        assert.strictEqual(codeOf(missing), "idempotency_key_required")
        for (const key of ["", "a".repeat(256), "has space", "tab\tkey", "caf\u00e9"]) {
          const response = yield* postRun(organization.secret, oneQuestion(), null, { headers: { "idempotency-key": key } })
          assert.strictEqual(response.status, 400, JSON.stringify(key))
          assert.strictEqual(codeOf(response), "invalid_idempotency_key", JSON.stringify(key))
        }
        const longest = yield* postRun(organization.secret, oneQuestion(), "k".repeat(255))
        assert.strictEqual(longest.status, 200)
        const punctuation = yield* postRun(organization.secret, oneQuestion(), "!~#$%&'*+-.^_`|{}")
        assert.strictEqual(punctuation.status, 200)
        assert.strictEqual((yield* counts(organization.organizationId)).runs, 2)
      }))

    it.effect("a refused run stores nothing, so its key works once the cause is fixed", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization({ billing: true })
        const key = freshKey()
        const refused = yield* postRun(organization.secret, oneQuestion(), key)
        assert.strictEqual(refused.status, 402)
        assert.strictEqual(codeOf(refused), "insufficient_credits")
        assert.strictEqual((yield* counts(organization.organizationId)).runs, 0)
        yield* grantCredit(organization.organizationId, 20_000)
        const accepted = yield* postRun(organization.secret, oneQuestion(), key)
        assert.strictEqual(accepted.status, 200)
        assert.isFalse(accepted.json().replayed)
        yield* assertMoneyInvariants
      }))

    it.effect("keys are scoped per organization", () =>
      Effect.gen(function*() {
        const first = yield* seedOrganization()
        const second = yield* seedOrganization()
        const key = freshKey()
        const a = yield* postRun(first.secret, oneQuestion(), key)
        const b = yield* postRun(second.secret, oneQuestion({ state: "another organization's body" }), key)
        assert.strictEqual(a.status, 200)
        assert.strictEqual(b.status, 200)
        assert.notStrictEqual(a.json().run_id, b.json().run_id)
      }))
  })
})
