/**
 * `POST /v1/router/select` with the built-in local model (the default install): the embedded classifier answers the
 * router's questions, so a haiku request is classified as writing (creative) and a SQL question as coding, the
 * difficulty label is the most probable of its probabilities, and the selection is still one billed decision run
 * readable at `GET /v1/runs/{id}`, with one output token per question read. A replay with the same key is free.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call } from "../../support/Api.js"
import { seedOrganization } from "../../support/Seed.js"
import { TestServerLive } from "../../support/TestServer.js"
import { postSelect } from "../fixtures/Select.js"

const mostProbable = (probabilities: Record<string, number>): string =>
  Object.entries(probabilities).reduce((best, item) => (item[1] > best[1] ? item : best))[0]

const sum = (values: ReadonlyArray<number>): number => values.reduce((total, value) => total + value, 0)

layer(TestServerLive(), { excludeTestServices: true, timeout: "120 seconds" })("router select with the local classifier", (it) => {
  describe("POST /v1/router/select > 200 classified by the embedded classifier", () => {
    it.effect("a haiku request is writing, writing.creative, with consistent labels and a readable billed run", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        const response = yield* postSelect(secret, { prompt: "Write a haiku about autumn leaves" }, "haiku-1")
        assert.strictEqual(response.status, 200, response.text)
        const selection = response.json()
        const { classification } = selection
        assert.strictEqual(classification.domain.label, "writing")
        assert.strictEqual(mostProbable(classification.domain.probabilities), "writing")
        assert.isAbove(classification.domain.probabilities.writing, 0.5)
        assert.closeTo(sum(Object.values(classification.domain.probabilities)), 1, 1e-9)
        assert.strictEqual(classification.task_type.label, "writing.creative")
        assert.isFalse(classification.task_type.fixed)
        assert.strictEqual(classification.difficulty.label, mostProbable(classification.difficulty.probabilities))
        for (const value of Object.values(classification.facets) as Array<number>) {
          assert.isTrue(value >= 0 && value <= 1)
        }
        assert.isBelow(classification.facets.needs_code_output, 0.5)
        assert.isBelow(classification.facets.non_english, 0.5)
        assert.isFalse(selection.low_confidence)
        assert.strictEqual(selection.decision_model, "decision-1")
        const run = (yield* call("GET", `/v1/runs/${selection.run_id}`, { secret })).json()
        assert.strictEqual(run.state, "completed")
        assert.strictEqual(run.decision.answers.family.choice, "writing")
        const read = Object.values(run.decision.answers).filter((answer) => answer !== null).length
        assert.deepStrictEqual(run.usage, selection.usage)
        assert.strictEqual(selection.usage.output_tokens, read, "one output token per question read, as before")
        assert.isAbove(selection.cost_micros, 0)
        const replay = yield* postSelect(secret, { prompt: "Write a haiku about autumn leaves" }, "haiku-1")
        assert.isTrue(replay.json().replayed)
        assert.deepStrictEqual(replay.json().classification, classification)
      }))

    it.effect("a SQL question is coding (SQL and data transformation) and asks for code", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        const response = yield* postSelect(secret, {
          prompt: "Write a SQL query that joins the orders and customers tables and returns each customer's total spend.",
          policy: "domain_skills"
        })
        assert.strictEqual(response.status, 200, response.text)
        const { classification } = response.json()
        assert.strictEqual(classification.domain.label, "coding")
        assert.strictEqual(classification.task_type.label, "coding.sql_data_transformation")
        assert.isAbove(classification.facets.needs_code_output, 0.5)
      }))

    it.effect("a fixed task type keeps the classifier to the difficulty and the facets", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        const response = yield* postSelect(secret, {
          prompt: "Quelle est la capitale de l'Australie ?",
          task_type: "knowledge.factual_qa"
        })
        assert.strictEqual(response.status, 200, response.text)
        const { classification } = response.json()
        assert.deepStrictEqual(classification.task_type.top, [{ label: "knowledge.factual_qa", probability: 1 }])
        assert.isAbove(classification.facets.non_english, 0.5)
      }))
  })
})
