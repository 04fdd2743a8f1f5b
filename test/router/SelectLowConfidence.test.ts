/**
 * `low_confidence` exactly as the contract says (decisions.md, Router), one test per policy through
 * `POST /v1/router/select` and a scripted OpenAI-compatible upstream: true only under `domain_skills` when the most
 * probable task type is under 40%; false under `balanced`, `cost_efficient` and `capability_heavy` whatever the
 * classification's confidence, even with the most probable family at 30% and the top type at 18%. An uncertain
 * family is noted in `reason` under any policy instead.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { FakeUpstream } from "../support/FakeUpstream.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerWithUpstreamLive } from "../support/TestServer.js"
import { classifierResponder, postSelect, type ScriptedClassification } from "./fixtures/Select.js"

const facets = { needs_code_output: 0.8, needs_long_context: 0.1, multi_step: 0.6, non_english: 0.05, needs_tools: 0.3 }

/** Family coding 30% (under 45%), and its first type 60% of it: the most probable type is 18%. */
const unsure: ScriptedClassification = {
  family: [0.3, 0.25, 0.25, 0.2],
  taskTypes: { coding: [0.6, 0.4], math: [0.5, 0.5], reasoning: [0.5, 0.5], knowledge: [0.5, 0.5] },
  difficulty: [0, 0.1, 0.2, 0.5, 0.2],
  facets
}

/** Family coding 100%, one type 100%. */
const sure: ScriptedClassification = { family: [1], taskTypes: { coding: [1] }, difficulty: [0, 0.1, 0.2, 0.5, 0.2], facets }

/** The top type at exactly 40%: not under the bar. */
const atBar: ScriptedClassification = { ...sure, taskTypes: { coding: [0.4, 0.35, 0.25] } }

const prompt = "Write a Rust function that returns the n-th prime, with tests and a short explanation."

const selectWith = (scripted: ScriptedClassification, policy: string) =>
  Effect.gen(function*() {
    const upstream = yield* FakeUpstream
    yield* upstream.reset
    yield* upstream.respondWith(classifierResponder(scripted))
    const { secret } = yield* seedOrganization()
    const response = yield* postSelect(secret, { prompt, policy })
    assert.strictEqual(response.status, 200, response.text)
    return response.json()
  })

const topProbability = (selection: any): number => selection.classification.task_type.top[0].probability

layer(TestServerWithUpstreamLive(), { excludeTestServices: true, timeout: "120 seconds" })("router low_confidence", (it) => {
  describe("POST /v1/router/select > low_confidence per policy", () => {
    it.effect("domain_skills: true when the most probable task type is under 40%, false at 40% and above", () =>
      Effect.gen(function*() {
        const low = yield* selectWith(unsure, "domain_skills")
        assert.isBelow(topProbability(low), 0.4)
        assert.isTrue(low.low_confidence)
        assert.include(low.reason, "low confidence")
        const bar = yield* selectWith(atBar, "domain_skills")
        assert.closeTo(topProbability(bar), 0.4, 1e-9)
        assert.isFalse(bar.low_confidence)
        const high = yield* selectWith(sure, "domain_skills")
        assert.isFalse(high.low_confidence)
      }))

    for (const policy of ["balanced", "cost_efficient", "capability_heavy"] as const) {
      it.effect(`${policy}: false whatever the confidence; an uncertain family is noted in the reason only`, () =>
        Effect.gen(function*() {
          const low = yield* selectWith(unsure, policy)
          assert.strictEqual(low.policy, policy)
          assert.strictEqual(low.classification.domain.label, "coding")
          assert.closeTo(low.classification.domain.probabilities.coding, 0.3, 1e-9)
          assert.isBelow(topProbability(low), 0.4)
          assert.isFalse(low.low_confidence)
          assert.include(low.reason, "uncertain classification: the most probable family, coding, has probability 30%")
          const high = yield* selectWith(sure, policy)
          assert.isFalse(high.low_confidence)
          assert.notInclude(high.reason, "uncertain")
        }))
    }
  })
})
