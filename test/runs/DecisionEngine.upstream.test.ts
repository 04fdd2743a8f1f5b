import { assert, layer } from "@effect/vitest"
import { Clock, Effect, Result } from "effect"
import { letterPromptBytes as promptBytes } from "../../src/providers/LetterReadout.js"
import type { NoulAnswer } from "../../src/runs/Answers.js"
import { callOccurred } from "../../src/runs/DecisionEngine.js"
import { executeDecision } from "../support/DecisionEngine.js"
import type { DecisionOptions } from "../../src/runs/DecisionEngine.js"
import { callCostMicros } from "../../src/runs/RunLimits.js"
import { compileQuestions } from "../../src/runs/Questions.js"
import type { WireQuestion } from "../../src/runs/Questions.js"
import { FakeUpstream } from "../support/FakeUpstream.js"
import { withUpstreamProvider } from "../support/UpstreamProvider.js"

const noul = (instructions: string): WireQuestion => ({ type: "noul", instructions })

/**
 * Runs a decision through the OpenAI-compatible provider against the fake upstream, with spans kept or not: the same
 * reads, calls and costs either way.
 */
const runWith = (traced: boolean) =>
(questions: Record<string, WireQuestion>, overrides: Partial<Omit<DecisionOptions, "deadline">> & { deadlineInMs?: number } = {}) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const { deadlineInMs, ...rest } = overrides
    return yield* executeDecision(Result.getOrThrow(compileQuestions(questions)), {
      state: "subject: invoice 42 was charged twice",
      draws: 1,
      thinkTokens: 0,
      deadline: now + (deadlineInMs ?? 10_000),
      ceilingMicros: 20_000,
      pricePerMtokMicros: 42_000,
      ...rest
    }).pipe(withUpstreamProvider({ maxRetries: 2 }), Effect.withTracerEnabled(traced))
  })

for (const traced of [true, false]) {
  const run = runWith(traced)

  layer(FakeUpstream.layer, { excludeTestServices: true })(`executeDecision against the fake upstream (spans ${traced ? "kept" : "off"})`, (it) => {
    it.effect("exact costs: three calls of 1,000 input and 1 output tokens cost 3 x 43 = 129", () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        yield* upstream.respondWith(() => ({ kind: "logprobs", top: { A: 0.75, B: 0.25 }, usage: { prompt_tokens: 1_000, completion_tokens: 1 } }))
        const result = yield* run({ a: noul("a"), b: noul("b"), c: noul("c") })
        assert.isNull(result.error)
        assert.deepStrictEqual(result.calls.map((call) => call.costMicros), [43, 43, 43])
        assert.strictEqual(result.costMicros, 129)
        assert.strictEqual(result.inputTokens, 3_000)
        assert.strictEqual(result.outputTokens, 3)
        assert.strictEqual((result.answers["a"] as NoulAnswer).probability, 0.75)
        assert.strictEqual((yield* upstream.requests).length, 3)
      }))

    it.effect("think_tokens: two calls per read, each a ledger entry with its cost", () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        yield* upstream.respondWith((request) =>
          request.body.logprobs === true
            ? { kind: "logprobs", top: { A: 0.5, B: 0.5 }, usage: { prompt_tokens: 200, completion_tokens: 1 } }
            : { kind: "thought", text: "It was charged twice.", usage: { prompt_tokens: 180, completion_tokens: 6 } }
        )
        const result = yield* run({ twice: noul("The invoice was charged twice") }, { draws: 2, thinkTokens: 16 })
        assert.isNull(result.error)
        assert.strictEqual(result.calls.length, 4)
        assert.deepStrictEqual(result.calls.map((call) => call.purpose).sort(), ["answer", "answer", "think", "think"])
        for (const call of result.calls) {
          assert.strictEqual(call.status, "succeeded")
          assert.strictEqual(call.costMicros, callCostMicros(call.inputTokens, call.outputTokens, 42_000))
        }
        assert.strictEqual(result.costMicros, 2 * callCostMicros(180, 6, 42_000) + 2 * callCostMicros(200, 1, 42_000))
        const requests = yield* upstream.requests
        const thinks = requests.filter((request) => request.body.logprobs !== true)
        assert.deepStrictEqual(thinks.map((request) => request.body.max_tokens), [16, 16])
        const letters = requests.filter((request) => request.body.logprobs === true)
        assert.isTrue(letters.every((request) => request.body.messages[1].content === "It was charged twice."))
      }))

    it.effect("429 forever: provider_rate_limited, failed entries only, no cost, no call occurred", () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        yield* upstream.respondWith(() => ({ kind: "status", status: 429 }))
        const result = yield* run({ a: noul("a") })
        assert.strictEqual(result.error?._tag, "provider_rate_limited")
        assert.deepStrictEqual(result.calls.map((call) => [call.retryOrdinal, call.status, call.costMicros]), [
          [0, "failed", 0],
          [1, "failed", 0],
          [2, "failed", 0]
        ])
        assert.strictEqual(result.costMicros, 0)
        assert.isFalse(callOccurred(result))
        assert.deepStrictEqual(result.answers, {})
      }))

    it.effect("no logprobs: decision_unavailable with a billed call, so the run settles failed", () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        yield* upstream.script({ kind: "noLogprobs", usage: { prompt_tokens: 77, completion_tokens: 1 } })
        const result = yield* run({ a: noul("a"), b: noul("b") })
        assert.strictEqual(result.error?._tag, "decision_unavailable")
        assert.isTrue(callOccurred(result))
        const billed = result.calls.filter((call) => call.status === "succeeded" && call.inputTokens === 77)
        assert.strictEqual(billed.length, 1)
        assert.strictEqual(billed[0]!.costMicros, callCostMicros(77, 1, 42_000))
      }))

    it.effect("a hang past the deadline: deadline_exceeded", () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        yield* upstream.respondWith(() => ({ kind: "hang" }))
        const result = yield* run({ a: noul("a") }, { deadlineInMs: 250 })
        assert.strictEqual(result.error?._tag, "deadline_exceeded")
        assert.deepStrictEqual(result.calls.map((call) => call.status), ["failed"])
        assert.isFalse(callOccurred(result))
      }))

    it.effect("budget_exhausted: a full-size state fits one read's worst case in the ceiling, not two", () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        const state = "word ".repeat(209_000)
        const result = yield* run({ a: noul("a"), b: noul("b") }, { state })
        assert.strictEqual(result.error?._tag, "budget_exhausted")
        const prompt = promptBytes({
          state,
          context: [],
          instructions: "b",
          type: "noul",
          options: [{ name: "yes", description: null }, { name: "no", description: null }],
          thinkTokens: 0
        }, state.length)
        const worst = callCostMicros(Math.ceil(prompt.answer / 4), 1, 42_000)
        assert.isAbove(worst, 10_000)
        assert.strictEqual(
          result.error!.message,
          `the next read could cost up to ${worst} micro-USD; with 0 spent and ${worst} held that would pass the run's ceiling of 20000`
        )
        assert.strictEqual((yield* upstream.requests).length, 1)
        assert.strictEqual(result.calls.length, 1)
        assert.strictEqual(result.calls[0]!.costMicros, callCostMicros(result.calls[0]!.inputTokens, 1, 42_000))
        assert.isAbove(result.costMicros, 10_000)
        assert.isTrue(callOccurred(result))
        assert.deepStrictEqual(Object.keys(result.answers), ["a"])
      }))
  })
}
