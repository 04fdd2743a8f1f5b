/**
 * Runs as the usage routes see them: a run in flight (the upstream slowed down) counts as `in_flight` with its whole
 * spend ceiling reserved in the rollup, the quota and its own usage until it settles; `GET /v1/usage/runs/{run_id}`
 * answers by either id spelling with the hyphenated one in the body, and `404 run_not_found` for anything that is
 * not the organization's run.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { SPEND_CEILING_MICROS } from "../../src/runs/RunLimits.js"
import { QuotaLedger } from "../../src/ledger/QuotaLedger.js"
import { call, codeOf } from "../support/Api.js"
import { FakeUpstream } from "../support/FakeUpstream.js"
import { assertMoneyInvariants } from "../support/Invariants.js"
import { oneQuestion, postRun } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { getJson, hyphenated } from "../support/Usage.js"
import { TestServerWithUpstreamLive } from "../support/TestServer.js"

/** Polls the rollup until a condition holds (the run's admission is not timed, only waited for). */
const rollupWhen = (secret: string, condition: (rollup: any) => boolean) =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 500; attempt++) {
      const rollup = yield* getJson("/v1/usage", secret)
      if (condition(rollup)) return rollup
      yield* Effect.sleep("10 millis")
    }
    return assert.fail("the rollup never reached the expected state")
  })

layer(TestServerWithUpstreamLive(), { excludeTestServices: true, timeout: "120 seconds" })("usage of runs", (it) => {
  describe("a run in flight", () => {
    it.effect("is in_flight with its ceiling reserved (rollup, quota, its own usage) until it settles", () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        const { organizationId, secret } = yield* seedOrganization()
        yield* (yield* QuotaLedger).setLimits(organizationId, { spendLimitMicros: 50_000, tokenLimit: 1_000_000 })
        yield* upstream.setLatency(2_000)
        const fiber = yield* Effect.forkChild(postRun(secret, oneQuestion()))

        const during = yield* rollupWhen(secret, (rollup) => rollup.runs.in_flight === 1)
        assert.deepStrictEqual(during.runs, { total: 1, completed: 0, failed: 0, in_flight: 1 })
        assert.deepStrictEqual(during.spend, { reserved_micros: SPEND_CEILING_MICROS, settled_micros: 0, unsettled_micros: 0 })
        assert.deepStrictEqual(during.tokens, { input_tokens: 0, output_tokens: 0, total_tokens: 0 })
        const quota = yield* getJson("/v1/quota", secret)
        assert.strictEqual(quota.spend_reserved_micros, SPEND_CEILING_MICROS)
        assert.strictEqual(quota.spend_remaining_micros, 50_000 - SPEND_CEILING_MICROS)
        assert.isAbove(quota.tokens_reserved, 0)
        assert.strictEqual(quota.tokens_remaining, 1_000_000 - quota.tokens_reserved)
        const [listed] = (yield* getJson("/v1/runs", secret)).runs
        const pending = yield* getJson(`/v1/usage/runs/${listed.run_id}`, secret)
        assert.deepInclude(pending, { state: "pending", settled_at: null, cost_micros: 0, reserved_micros: SPEND_CEILING_MICROS, calls: [] })
        const today = (yield* getJson("/v1/usage/daily", secret)).days.find((day: any) => day.date === pending.created_at.slice(0, 10))
        assert.deepInclude(today, { runs: 1, spend_micros: 0 })

        const response = yield* Fiber.join(fiber)
        yield* upstream.setLatency(0)
        assert.strictEqual(response.status, 200, response.text)
        const cost = response.json().cost_micros
        const after = yield* getJson("/v1/usage", secret)
        assert.deepStrictEqual(after.runs, { total: 1, completed: 1, failed: 0, in_flight: 0 })
        assert.deepStrictEqual(after.spend, { reserved_micros: 0, settled_micros: cost, unsettled_micros: 0 })
        const settled = yield* getJson(`/v1/usage/runs/${listed.run_id}`, secret)
        assert.deepInclude(settled, { state: "completed", cost_micros: cost, reserved_micros: 0 })
        assert.isString(settled.settled_at)
        const quotaAfter = yield* getJson("/v1/quota", secret)
        assert.deepInclude(quotaAfter, { spend_reserved_micros: 0, tokens_reserved: 0, spend_settled_micros: cost, spend_remaining_micros: 50_000 - cost })
        yield* assertMoneyInvariants
      }))
  })

  describe("a run that failed before any call occurred", () => {
    it.effect("stays in_flight (pending, replays 202) but reserves nothing once its holds are released", () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        const { secret } = yield* seedOrganization()
        yield* upstream.script({ kind: "status", status: 500 }, { kind: "status", status: 500 }, { kind: "status", status: 500 })
        const response = yield* postRun(secret, oneQuestion())
        assert.strictEqual(codeOf(response), "provider_unavailable", response.text)
        const rollup = yield* getJson("/v1/usage", secret)
        assert.deepStrictEqual(rollup.runs, { total: 1, completed: 0, failed: 0, in_flight: 1 })
        assert.deepStrictEqual(rollup.spend, { reserved_micros: 0, settled_micros: 0, unsettled_micros: 0 })
        const ledger = (yield* getJson("/v1/usage/ledger", secret)).entries
        assert.deepStrictEqual(ledger.map((entry: any) => [entry.retry_ordinal, entry.status, entry.cost_micros]), [[2, "failed", 0], [1, "failed", 0], [0, "failed", 0]])
        const run = yield* getJson(`/v1/usage/runs/${ledger[0].run_id}`, secret)
        assert.deepInclude(run, { state: "pending", settled_at: null, reserved_micros: 0, cost_micros: 0 })
        assert.deepInclude(yield* getJson("/v1/quota", secret), { spend_reserved_micros: 0, tokens_reserved: 0 })
        yield* assertMoneyInvariants
      }))
  })

  describe("GET /v1/usage/runs/{run_id} > 200", () => {
    it.effect("by both spellings, hyphenated in the body, with its calls oldest first matching the ledger", () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        const { organizationId, secret } = yield* seedOrganization()
        yield* upstream.script(
          { kind: "status", status: 503 },
          { kind: "logprobs", top: { A: 0.9, B: 0.1 }, usage: { prompt_tokens: 5000, completion_tokens: 3 }, id: "chatcmpl-ok" }
        )
        const run = (yield* postRun(secret, oneQuestion())).json()
        const ledger = (yield* getJson("/v1/usage/ledger", secret)).entries
        const byCompact = yield* getJson(`/v1/usage/runs/${run.run_id}`, secret)
        const byHyphenated = yield* getJson(`/v1/usage/runs/${hyphenated(run.run_id)}`, secret)
        assert.deepStrictEqual(byHyphenated, byCompact)
        assert.deepStrictEqual(byCompact, {
          run_id: hyphenated(run.run_id),
          organization_id: organizationId,
          kind: "decision",
          state: "completed",
          created_at: run.created_at,
          settled_at: run.settled_at,
          tokens: { input_tokens: 5000, output_tokens: 3, total_tokens: 5003 },
          cost_micros: 211,
          reserved_micros: 0,
          calls: [...ledger].reverse()
        })
        assert.deepStrictEqual(byCompact.calls.map((entry: any) => [entry.retry_ordinal, entry.status, entry.cost_micros]), [[0, "failed", 0], [1, "succeeded", 211]])
        assert.strictEqual(run.cost_micros, byCompact.calls.reduce((total: number, entry: any) => total + entry.cost_micros, 0))
      }))
  })

  describe("GET /v1/usage/runs/{run_id} > 404 run_not_found", () => {
    it.effect("another organization's run (either spelling), an unknown id and malformed ids", () =>
      Effect.gen(function*() {
        const mine = yield* seedOrganization()
        const theirs = yield* seedOrganization()
        const run = (yield* postRun(theirs.secret, oneQuestion())).json()
        const ids = [
          run.run_id,
          hyphenated(run.run_id),
          `run_${"0".repeat(32)}`,
          run.run_id.toUpperCase().replace("RUN_", "run_"),
          run.run_id.slice(4),
          "run_xyz",
          `${run.run_id}0`
        ]
        for (const id of ids) {
          const response = yield* call("GET", `/v1/usage/runs/${encodeURIComponent(id)}`, { secret: mine.secret })
          assert.strictEqual(response.status, 404, `${id}: ${response.text}`)
          assert.strictEqual(codeOf(response), "run_not_found", id)
          assert.strictEqual(response.json().error.request_id, response.headers["x-request-id"])
        }
        assert.strictEqual((yield* call("GET", `/v1/usage/runs/${run.run_id}`, { secret: theirs.secret })).status, 200)
      }))
  })
})
