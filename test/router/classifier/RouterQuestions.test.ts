/**
 * The local model answers the router's compiled classification questions from the embedded classifier (matched
 * exactly, options in any order) and every other question lexically as before, reporting usage exactly as before
 * (input tokens of the letter prompt, one output token, a `local_` request id).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { letterPrompt } from "../../../src/providers/LetterReadout.js"
import { LocalModel } from "../../../src/providers/LocalModel.js"
import { ModelProvider, type Read } from "../../../src/providers/ModelProvider.js"
import { compileClassification } from "../../../src/router/ClassificationRun.js"
import { shippedClassifier } from "../../../src/router/classifier/RouterAnswers.js"
import { routerQuestionIndex } from "../../../src/router/classifier/RouterQuestions.js"
import { promptExcerpt } from "../../../src/router/classification/PromptExcerpt.js"
import { rotateOptions } from "../../../src/runs/Draws.js"
import { realTaxonomy } from "../fixtures/RouterFixtures.js"

const plans = Result.getOrThrow(compileClassification(realTaxonomy))

/** The read of one compiled question over a task, as the decision engine makes it (draw 0, alone). */
const readOf = (id: string, task: string, draw = 0): Read => {
  const question = plans.classified.plan.questions.find((item) => item.id === id)!
  return {
    state: promptExcerpt(task),
    context: [],
    instructions: question.instructions,
    type: question.type,
    options: rotateOptions(question.options, draw),
    thinkTokens: 0
  }
}

const readLocal = (read: Read) =>
  Effect.flatMap(ModelProvider, (provider) => provider.read(read, { deadline: Date.now() + 60_000 })).pipe(
    Effect.provide(LocalModel.layer)
  )

const byName = (read: Read, probabilities: ReadonlyArray<number>) =>
  Object.fromEntries(read.options.map((option, index) => [option.name, probabilities[index]!]))

const HAIKU = "Write a haiku about autumn leaves"

describe("router question index", () => {
  const recognize = routerQuestionIndex(shippedClassifier().labels)

  it("recognizes every compiled classification question, in any option order", () => {
    for (const question of plans.classified.plan.questions) {
      for (const draw of [0, 1]) {
        const found = recognize(readOf(question.id, HAIKU, draw))
        assert.isNotNull(found, question.id)
        const kind = question.id === "family" ? "family" : question.id === "difficulty" ? "difficulty" : question.id.startsWith("task_type.") ? "task_type" : "facet"
        assert.strictEqual(found!.kind, kind, question.id)
      }
    }
  })

  it("does not take a caller's question for the router's: other options, type or instructions", () => {
    const family = readOf("family", HAIKU)
    assert.isNull(recognize({ ...family, options: family.options.slice(1) }))
    assert.isNull(recognize({ ...family, type: "score" }))
    assert.isNull(recognize({ ...family, instructions: `${family.instructions} ` }))
    assert.isNull(recognize({ ...family, instructions: "Which team should handle the message?" }))
  })
})

describe("LocalModel over the router's questions", () => {
  it.effect("answers the family, task-type, difficulty and facet questions from the classifier", () =>
    Effect.gen(function*() {
      const familyRead = readOf("family", HAIKU)
      const family = byName(familyRead, (yield* readLocal(familyRead)).probabilities)
      assert.isAbove(family["writing"]!, 0.5)
      const typeRead = readOf("task_type.writing", HAIKU, 2)
      const types = byName(typeRead, (yield* readLocal(typeRead)).probabilities)
      assert.strictEqual(Object.entries(types).reduce((a, b) => (b[1] > a[1] ? b : a))[0], "writing.creative")
      assert.closeTo(Object.values(types).reduce((a, b) => a + b, 0), 1, 1e-9)
      const levelsRead = readOf("difficulty", HAIKU)
      const levels = (yield* readLocal(levelsRead)).probabilities
      assert.strictEqual(levels.length, 5)
      assert.closeTo(levels.reduce((a, b) => a + b, 0), 1, 1e-9)
      const code = (yield* readLocal(readOf("needs_code_output", HAIKU))).probabilities
      assert.isBelow(code[0]!, 0.2)
      assert.closeTo(code[0]! + code[1]!, 1, 1e-12)
      const sql = (yield* readLocal(readOf("needs_code_output", "Write a SQL query that counts orders per customer"))).probabilities
      assert.isAbove(sql[0]!, 0.7)
    }))

  it.effect("reports usage as before: letter-prompt input tokens, one output token, a local request id", () =>
    Effect.gen(function*() {
      const read = readOf("family", HAIKU)
      const outcome = yield* readLocal(read)
      assert.strictEqual(outcome.calls.length, 1)
      const [call] = outcome.calls
      assert.strictEqual(call!.inputTokens, Math.ceil(Buffer.byteLength(letterPrompt(read)) / 4))
      assert.strictEqual(call!.outputTokens, 1)
      assert.match(call!.providerRequestId!, /^local_[0-9a-f]{32}$/)
      assert.deepStrictEqual(yield* readLocal(read), outcome)
    }))

  it.effect("keeps the lexical answers for every other question", () =>
    Effect.gen(function*() {
      const read: Read = {
        state: "I was charged twice on my invoice and want a refund of the payment.",
        context: [],
        instructions: "Which team should handle the message?",
        type: "choice",
        options: [
          { name: "sales", description: "new contracts, pricing and upgrades" },
          { name: "billing", description: "invoices, payments, charges and refunds" }
        ],
        thinkTokens: 0
      }
      const [sales, billing] = (yield* readLocal(read)).probabilities
      assert.isAbove(billing!, 0.8)
      assert.isBelow(sales!, 0.2)
    }))
})
