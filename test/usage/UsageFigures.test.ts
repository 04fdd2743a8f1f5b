/**
 * The usage figures against runs made through `POST /v1/runs` with scripted upstream usage: the rollup, the ledger,
 * the daily series and the quota agree with each other and with the runs to the micro-USD; totals and the daily
 * series count runs by creation time while the ledger counts calls by call time, in half-open windows.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { formatTimestamp } from "../../schema/Ids.js"
import { QuotaLedger } from "../../src/ledger/QuotaLedger.js"
import { monthOf, utcDays } from "../../src/usage/Window.js"
import { codeOf } from "../support/Api.js"
import { FakeUpstream } from "../support/FakeUpstream.js"
import { assertMoneyInvariants } from "../support/Invariants.js"
import { oneQuestion, postRun, twoQuestions } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { getJson, hyphenated, windowQuery } from "../support/Usage.js"
import { TestServerWithUpstreamLive } from "../support/TestServer.js"

const sum = (values: ReadonlyArray<number>) => values.reduce((total, value) => total + value, 0)

layer(TestServerWithUpstreamLive(), { excludeTestServices: true, timeout: "120 seconds" })("usage figures", (it) => {
  describe("GET /v1/usage, /v1/usage/ledger, /v1/usage/daily, /v1/quota > 200", () => {
    it.effect("agree with the runs and with each other to the micro-USD", () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        const { organizationId, secret } = yield* seedOrganization()
        yield* upstream.script(
          { kind: "logprobs", top: { B: 0.7, A: 0.2, C: 0.1 }, usage: { prompt_tokens: 1000, completion_tokens: 1 }, id: "chatcmpl-a" },
          { kind: "logprobs", top: { C: 0.6, B: 0.3, A: 0.1 }, usage: { prompt_tokens: 1000, completion_tokens: 1 }, id: "chatcmpl-a" }
        )
        const a = yield* postRun(secret, twoQuestions())
        assert.strictEqual(a.status, 200, a.text)
        yield* upstream.script(
          { kind: "status", status: 500 },
          { kind: "logprobs", top: { A: 0.9, B: 0.1 }, usage: { prompt_tokens: 5000, completion_tokens: 3 }, id: "chatcmpl-b" }
        )
        const b = yield* postRun(secret, oneQuestion())
        assert.strictEqual(b.status, 200, b.text)
        yield* upstream.script({ kind: "noLogprobs", usage: { prompt_tokens: 2500, completion_tokens: 1 }, id: "chatcmpl-c" })
        const c = yield* postRun(secret, oneQuestion({ state: "A different ticket" }))
        assert.strictEqual(codeOf(c), "decision_unavailable", "settles failed, charged for its call")
        const listed = (yield* getJson("/v1/runs", secret)).runs.map((row: any) => row.run_id)
        const runs = yield* Effect.forEach(listed as ReadonlyArray<string>, (id) => getJson(`/v1/runs/${id}`, secret))
        const [runC, runB, runA] = runs
        assert.deepStrictEqual(runs.map((run) => [run.state, run.cost_micros]), [["failed", 106], ["completed", 211], ["completed", 86]])

        const month = monthOf(new Date())
        const rollup = yield* getJson("/v1/usage", secret)
        assert.deepStrictEqual(rollup, {
          organization_id: organizationId,
          window: { start_at: formatTimestamp(month.start), end_at: formatTimestamp(month.end) },
          runs: { total: 3, completed: 2, failed: 1, in_flight: 0 },
          tokens: { input_tokens: 9500, output_tokens: 6, total_tokens: 9506 },
          spend: { reserved_micros: 0, settled_micros: 403, unsettled_micros: 0 }
        })
        assert.strictEqual(sum(runs.map((run) => run.cost_micros)), rollup.spend.settled_micros)
        assert.strictEqual(sum(runs.map((run) => run.usage.input_tokens)), rollup.tokens.input_tokens)
        assert.strictEqual(sum(runs.map((run) => run.usage.output_tokens)), rollup.tokens.output_tokens)

        const ledger = yield* getJson("/v1/usage/ledger", secret)
        assert.strictEqual(ledger.limit, 50)
        assert.deepStrictEqual(ledger.window, rollup.window)
        const entries: ReadonlyArray<any> = ledger.entries
        assert.deepStrictEqual(
          entries.map((entry) => [entry.run_id, entry.retry_ordinal, entry.status, entry.tokens, entry.cost_micros]),
          [
            [hyphenated(runC.run_id), 0, "succeeded", { input_tokens: 2500, output_tokens: 1, total_tokens: 2501 }, 106],
            [hyphenated(runB.run_id), 1, "succeeded", { input_tokens: 5000, output_tokens: 3, total_tokens: 5003 }, 211],
            [hyphenated(runB.run_id), 0, "failed", { input_tokens: 0, output_tokens: 0, total_tokens: 0 }, 0],
            [hyphenated(runA.run_id), 0, "succeeded", { input_tokens: 1000, output_tokens: 1, total_tokens: 1001 }, 43],
            [hyphenated(runA.run_id), 0, "succeeded", { input_tokens: 1000, output_tokens: 1, total_tokens: 1001 }, 43]
          ]
        )
        for (const entry of entries) {
          assert.strictEqual(entry.provider, "openai")
          assert.strictEqual(entry.model_id, "decision-1")
          assert.match(entry.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/)
        }
        assert.deepStrictEqual(entries.filter((entry) => entry.status === "succeeded").map((entry) => entry.provider_request_id), ["chatcmpl-c", "chatcmpl-b", "chatcmpl-a", "chatcmpl-a"])
        entries.slice(1).forEach((entry, index) => assert.isTrue(entry.created_at <= entries[index].created_at, "newest first"))
        assert.strictEqual(sum(entries.map((entry) => entry.cost_micros)), rollup.spend.settled_micros)
        assert.strictEqual(sum(entries.map((entry) => entry.tokens.total_tokens)), rollup.tokens.total_tokens)
        assert.deepStrictEqual((yield* getJson("/v1/usage/ledger?limit=2", secret)).entries, entries.slice(0, 2))

        const daily = yield* getJson("/v1/usage/daily", secret)
        assert.deepStrictEqual(daily.window, rollup.window)
        assert.deepStrictEqual(daily.days.map((day: any) => day.date), utcDays(month), "every day of the month, future days included")
        const today = runA.created_at.slice(0, 10)
        for (const day of daily.days) {
          assert.deepStrictEqual(day, day.date === today
            ? { date: today, runs: 3, input_tokens: 9500, output_tokens: 6, spend_micros: 403 }
            : { date: day.date, runs: 0, input_tokens: 0, output_tokens: 0, spend_micros: 0 })
        }

        const quota = yield* getJson("/v1/quota", secret)
        assert.deepStrictEqual(quota, {
          organization_id: organizationId,
          period: rollup.window,
          period_spend_limit_micros: null,
          period_token_limit: null,
          spend_settled_micros: 403,
          spend_reserved_micros: 0,
          spend_remaining_micros: null,
          tokens_settled: 9506,
          tokens_reserved: 0,
          tokens_remaining: null
        })
        const limits = yield* QuotaLedger
        yield* limits.setLimits(organizationId, { spendLimitMicros: 1_000, tokenLimit: 10_000 })
        const limited = yield* getJson("/v1/quota", secret)
        assert.deepStrictEqual(
          [limited.period_spend_limit_micros, limited.spend_remaining_micros, limited.period_token_limit, limited.tokens_remaining],
          [1_000, 597, 10_000, 494]
        )
        yield* limits.setLimits(organizationId, { spendLimitMicros: 100, tokenLimit: null })
        const exceeded = yield* getJson("/v1/quota", secret)
        assert.deepStrictEqual([exceeded.spend_remaining_micros, exceeded.tokens_remaining], [0, null], "never below zero")
        yield* assertMoneyInvariants
      }))
  })

  describe("windows: totals and the daily series by run creation, the ledger by call time, half-open", () => {
    it.effect("a run created yesterday whose call was recorded today", () =>
      Effect.gen(function*() {
        const { secret, organizationId } = yield* seedOrganization()
        const run = (yield* postRun(secret, oneQuestion())).json()
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE runs SET created_at = created_at - interval '1 day' WHERE organization_id = ${organizationId}`
        const [call] = (yield* getJson("/v1/usage/ledger", secret)).entries
        const today = new Date(`${call.created_at.slice(0, 10)}T00:00:00Z`)
        const yesterday = new Date(today.getTime() - 86_400_000)
        const tomorrow = new Date(today.getTime() + 86_400_000)

        const before = yield* getJson(`/v1/usage?${windowQuery(yesterday, today)}`, secret)
        assert.deepStrictEqual(before.runs, { total: 1, completed: 1, failed: 0, in_flight: 0 })
        assert.strictEqual(before.spend.settled_micros, run.cost_micros)
        assert.strictEqual((yield* getJson(`/v1/usage?${windowQuery(today, tomorrow)}`, secret)).runs.total, 0)
        assert.deepStrictEqual((yield* getJson(`/v1/usage/ledger?${windowQuery(yesterday, today)}`, secret)).entries, [])
        assert.lengthOf((yield* getJson(`/v1/usage/ledger?${windowQuery(today, tomorrow)}`, secret)).entries, 1)
        const days = (yield* getJson(`/v1/usage/daily?${windowQuery(yesterday, tomorrow)}`, secret)).days
        assert.deepStrictEqual(days, [
          { date: formatTimestamp(yesterday).slice(0, 10), runs: 1, input_tokens: run.usage.input_tokens, output_tokens: run.usage.output_tokens, spend_micros: run.cost_micros },
          { date: formatTimestamp(today).slice(0, 10), runs: 0, input_tokens: 0, output_tokens: 0, spend_micros: 0 }
        ])

        const second = new Date(call.created_at)
        const next = new Date(second.getTime() + 1000)
        assert.lengthOf((yield* getJson(`/v1/usage/ledger?${windowQuery(second, next)}`, secret)).entries, 1, "the start is inside")
        const earlier = new Date(second.getTime() - 1000)
        const [stored] = yield* sql<{ exact: boolean }>`SELECT created_at = date_trunc('second', created_at) AS exact
          FROM ledger_entries WHERE organization_id = ${organizationId}`
        if (!stored!.exact) {
          assert.deepStrictEqual((yield* getJson(`/v1/usage/ledger?${windowQuery(earlier, second)}`, secret)).entries, [], "the end is outside")
        }
      }))
  })
})
