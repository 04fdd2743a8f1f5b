/**
 * `POST /v1/router/select` classifying through a real OpenAI-compatible server whose answers each test scripts:
 * the family's probabilities become `classification.domain`, the task-type questions are read only for families of
 * 5% or more and mix into `task_type.top`, the difficulty levels give the label and its probabilities, the facets
 * come back as given, `domain_skills` is `low_confidence` under 40%, a caller-fixed task type or domain skips that
 * part, and only the head and tail of a long prompt are read.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call, codeOf } from "../support/Api.js"
import { FakeUpstream } from "../support/FakeUpstream.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerWithUpstreamLive } from "../support/TestServer.js"
import { classifierResponder, postSelect, promptOf, questionOf, type ScriptedClassification } from "./fixtures/Select.js"

const Facets = { needs_code_output: 0.8, needs_long_context: 0.1, multi_step: 0.6, non_english: 0.05, needs_tools: 0.3 }

const script = (overrides: ScriptedClassification = {}): ScriptedClassification => ({
  family: [0.5, 0.3, 0.17, 0.03],
  taskTypes: { coding: [0.6, 0.4], math: [0.2, 0.8], reasoning: [1] },
  difficulty: [0, 0.1, 0.2, 0.5, 0.2],
  facets: Facets,
  ...overrides
})

/** Scripts the upstream, sends one select, and returns the selection with the questions the upstream was asked. */
const selectWith = (scripted: ScriptedClassification, body: Record<string, unknown>, status = 200) =>
  Effect.gen(function*() {
    const upstream = yield* FakeUpstream
    yield* upstream.reset
    yield* upstream.respondWith(classifierResponder(scripted))
    const { secret } = yield* seedOrganization()
    const response = yield* postSelect(secret, body)
    assert.strictEqual(response.status, status, response.text)
    const requests = yield* upstream.requests
    return { secret, selection: response.json(), requests, asked: requests.map(questionOf).sort() }
  })

const task = { prompt: "Write a Rust function that returns the n-th prime, with tests and a short explanation." }

layer(TestServerWithUpstreamLive(), { excludeTestServices: true, timeout: "120 seconds" })("router classification", (it) => {
  describe("POST /v1/router/select > 200 classified", () => {
    it.effect("probabilities flow into domain, task_type.top, family, difficulty and facets", () =>
      Effect.gen(function*() {
        const { asked, requests, secret, selection } = yield* selectWith(script(), task)
        assert.deepStrictEqual(asked, [
          "difficulty", "family", "multi_step", "needs_code_output", "needs_long_context", "needs_tools", "non_english",
          "task_type.coding", "task_type.math", "task_type.reasoning"
        ], "knowledge (3%) gets no task-type question; the other families under 5% neither")
        const { classification } = selection
        assert.strictEqual(classification.domain.label, "coding")
        const domain = classification.domain.probabilities
        assert.deepStrictEqual(Object.keys(domain), ["coding", "math", "reasoning", "knowledge", "agentic", "long_context", "writing", "multilingual", "general"])
        for (const [family, p] of Object.entries({ coding: 0.5, math: 0.3, reasoning: 0.17, knowledge: 0.03, general: 0 })) {
          assert.closeTo(domain[family], p, 1e-9, family)
        }
        // P(type) = P(family) x P(type | family) over coding, math and reasoning (0.97), renormalized.
        const expected = [
          ["coding.code_generation", 0.3], ["math.applied_quantitative", 0.24], ["coding.code_editing", 0.2],
          ["reasoning.logic_puzzles", 0.17], ["math.competition", 0.06]
        ] as const
        assert.deepStrictEqual(classification.task_type.top.map((entry: any) => entry.label), expected.map(([label]) => label))
        classification.task_type.top.forEach((entry: any, index: number) => assert.closeTo(entry.probability, expected[index]![1] / 0.97, 1e-9))
        assert.strictEqual(classification.task_type.label, "coding.code_generation")
        assert.strictEqual(classification.task_type.family, "coding")
        assert.isFalse(classification.task_type.fixed)
        assert.strictEqual(classification.difficulty.label, "hard", "score (0.1 + 0.4 + 1.5 + 0.8) / 4 = 0.7")
        assert.closeTo(classification.difficulty.probabilities.easy, 0.1, 1e-9)
        assert.closeTo(classification.difficulty.probabilities.medium, 0.2, 1e-9)
        assert.closeTo(classification.difficulty.probabilities.hard, 0.7, 1e-9)
        for (const [facet, p] of Object.entries(Facets)) assert.closeTo(classification.facets[facet], p, 1e-9, facet)
        assert.closeTo(selection.threshold.r, 0.8 + 0.18 * 0.7, 1e-6, "the bar follows the difficulty score")
        assert.strictEqual(selection.difficulty_floor, selection.threshold.tau)
        const taskTypeReads = requests.filter((request) => questionOf(request).startsWith("task_type."))
        for (const read of taskTypeReads) assert.notInclude(promptOf(read), "Earlier answers", "task-type questions are read alone")
        const run = (yield* call("GET", `/v1/runs/${selection.run_id}`, { secret })).json()
        assert.strictEqual(run.decision.answers["task_type.knowledge"], null)
        assert.deepStrictEqual(run.decision.skipped["task_type.knowledge"], { because: "family", was: "coding", wanted: ["knowledge"] })
      }))

    it.effect("domain_skills is low_confidence when the most probable task type is under 40%, not at 50%", () =>
      Effect.gen(function*() {
        const unsure = yield* selectWith(
          script({ family: [0.5, 0.5], taskTypes: { coding: [0.6, 0.4], math: [0.3, 0.7] } }),
          { ...task, policy: "domain_skills" }
        )
        assert.strictEqual(unsure.selection.classification.task_type.label, "math.applied_quantitative")
        assert.closeTo(unsure.selection.classification.task_type.top[0].probability, 0.35, 1e-9)
        assert.isTrue(unsure.selection.low_confidence)
        assert.include(unsure.selection.reason, "low confidence")
        assert.isNull(unsure.selection.threshold)
        assert.isNull(unsure.selection.difficulty_floor)
        const sure = yield* selectWith(script({ family: [0.5, 0.5], taskTypes: { coding: [1], math: [0.3, 0.7] } }), { ...task, policy: "domain_skills" })
        assert.closeTo(sure.selection.classification.task_type.top[0].probability, 0.5, 1e-9)
        assert.isFalse(sure.selection.low_confidence)
        const balanced = yield* selectWith(script({ family: [0.5, 0.5], taskTypes: { coding: [0.6, 0.4], math: [0.3, 0.7] } }), task)
        assert.isFalse(balanced.selection.low_confidence, "only domain_skills reports low confidence")
      }))
  })

  describe("POST /v1/router/select > 200 fixed", () => {
    it.effect("a fixed task_type wins over domain: no family or task-type question, probability 1.0, fixed true", () =>
      Effect.gen(function*() {
        const { asked, selection } = yield* selectWith(script(), { ...task, task_type: "coding.debugging", domain: "math" })
        assert.deepStrictEqual(asked, ["difficulty", "multi_step", "needs_code_output", "needs_long_context", "needs_tools", "non_english"])
        assert.deepStrictEqual(selection.classification.task_type, {
          label: "coding.debugging",
          family: "coding",
          top: [{ label: "coding.debugging", probability: 1 }],
          fixed: true
        })
        assert.strictEqual(selection.classification.domain.label, "coding")
        assert.strictEqual(selection.classification.domain.probabilities.coding, 1)
        assert.strictEqual(selection.classification.domain.probabilities.math, 0)
        assert.strictEqual(selection.classification.difficulty.label, "hard", "difficulty is still classified")
      }))

    it.effect("a fixed domain routes as its default task type", () =>
      Effect.gen(function*() {
        const { asked, selection } = yield* selectWith(script(), { ...task, domain: "writing" })
        assert.notInclude(asked, "family")
        assert.deepStrictEqual(selection.classification.task_type.top, [{ label: "writing.professional", probability: 1 }])
        assert.isTrue(selection.classification.task_type.fixed)
        assert.deepStrictEqual(selection.classification.domain.label, "writing")
      }))
  })

  describe("POST /v1/router/select > long prompts", () => {
    it.effect("only the head and tail of a 3 MiB prompt are read; input_tokens_est counts all of it", () =>
      Effect.gen(function*() {
        const prompt = "HEAD-MARKER " + "a".repeat(1_500_000) + " MIDDLE-MARKER " + "b".repeat(1_500_000) + " TAIL-MARKER"
        const { requests, selection } = yield* selectWith(script(), { prompt })
        assert.strictEqual(selection.input_tokens_est, Math.ceil(prompt.length / 4))
        assert.isAbove(requests.length, 0)
        for (const request of requests) {
          const read = promptOf(request)
          assert.include(read, "HEAD-MARKER")
          assert.include(read, "TAIL-MARKER")
          assert.notInclude(read, "MIDDLE-MARKER")
          assert.include(read, "characters of the task omitted")
          assert.isBelow(read.length, 12_000)
        }
        assert.deepStrictEqual(selection.filters_applied.map((applied: any) => applied.filter), ["context_fits_input"])
      }))
  })

  describe("POST /v1/router/select > upstream failures", () => {
    it.effect("503 when no call occurred: the run stays pending and the same key answers 409 while it is", () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        yield* upstream.respondWith(() => ({ kind: "status", status: 500 }))
        const { secret } = yield* seedOrganization()
        const first = yield* postSelect(secret, task, "outage-1")
        assert.strictEqual(first.status, 503)
        assert.strictEqual(codeOf(first), "provider_unavailable")
        const again = yield* postSelect(secret, task, "outage-1")
        assert.strictEqual(again.status, 409)
        assert.strictEqual(codeOf(again), "idempotency_conflict")
        assert.include(again.json().error.message, "not ready")
      }))

    it.effect("503 decision_unavailable after a call: the run failed and the same key answers 409", () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        yield* upstream.respondWith(() => ({ kind: "noLogprobs" }))
        const { secret } = yield* seedOrganization()
        const first = yield* postSelect(secret, task, "unreadable-1")
        assert.strictEqual(codeOf(first), "decision_unavailable")
        const again = yield* postSelect(secret, task, "unreadable-1")
        assert.strictEqual(again.status, 409)
        assert.include(again.json().error.message, "failed (decision_unavailable)")
      }))
  })
})
