/**
 * The classification as a decision run, without I/O: the compiled question sets (every family's task-type question
 * conditioned on P(family) >= 5%, none when the task is fixed), the run spec of a request (its digest, excerpt,
 * token reservation and deadline), the reading of stored answers, and the head-and-tail excerpt of a long task.
 */
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"
import { classificationSpec, compileClassification, readClassification } from "../../src/router/ClassificationRun.js"
import { HEAD_CHARS, promptExcerpt, TAIL_CHARS } from "../../src/router/classification/PromptExcerpt.js"
import { defaultDeadlineMs } from "../../src/runs/RunLimits.js"
import { realTaxonomy } from "./fixtures/RouterFixtures.js"

const LoneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

const plans = Result.getOrThrow(compileClassification(realTaxonomy))

describe("compileClassification", () => {
  it("classified: family, difficulty and facets first; each family's task type after, only when P(family) >= 5%", () => {
    const { plan } = plans.classified
    assert.strictEqual(plan.questions.length, 1 + realTaxonomy.families.length + 1 + 5)
    assert.deepStrictEqual(plan.stages[0]!.map((question) => question.id), [
      "family", "difficulty", "needs_code_output", "needs_long_context", "multi_step", "non_english", "needs_tools"
    ])
    assert.deepStrictEqual(plan.stages[1]!.map((question) => question.id), realTaxonomy.families.map((family) => `task_type.${family}`))
    for (const question of plan.stages[1]!) {
      const family = question.id.slice("task_type.".length)
      assert.isTrue(question.alone)
      assert.strictEqual(question.conditions.length, 1)
      const condition = question.conditions[0]!
      assert.strictEqual(condition.kind, "probability_at_least")
      if (condition.kind !== "probability_at_least") continue
      assert.strictEqual(condition.question, "family")
      assert.strictEqual(condition.alternative, family)
      assert.closeTo(condition.min, 0.05, 1e-9)
      assert.deepStrictEqual(question.options.map((option) => option.name), realTaxonomy.taskTypesByFamily.get(family)!.map((type) => type.id))
    }
  })

  it("fixed: only the difficulty and the facets, in one stage", () => {
    assert.deepStrictEqual(plans.fixed.plan.stages.map((stage) => stage.map((question) => question.id)), [
      ["difficulty", "needs_code_output", "needs_long_context", "multi_step", "non_english", "needs_tools"]
    ])
  })
})

describe("classificationSpec", () => {
  it("a decision run over the excerpt, with the request's digest, one output token per question and the default deadline", () => {
    const text = "x".repeat(50_000)
    const classified = Result.getOrThrow(classificationSpec(plans, { text, fixed: {}, digest: "d".repeat(64) }))
    assert.strictEqual(classified.kind, "decision")
    assert.strictEqual(classified.inputDigest, "d".repeat(64))
    assert.strictEqual(classified.prompt, promptExcerpt(text))
    const expectedInput = Math.ceil(classified.prompt.length / 4) + Math.ceil(plans.classified.contractBytes / 4)
    assert.strictEqual(classified.inputTokens, expectedInput)
    assert.strictEqual(classified.holdTokens, expectedInput + 16)
    assert.strictEqual(classified.deadlineMs, defaultDeadlineMs("decision", expectedInput))
    assert.deepStrictEqual([classified.draws, classified.thinkTokens, classified.maxOutputTokens], [1, 0, undefined])
    const fixed = Result.getOrThrow(classificationSpec(plans, { text, fixed: { domain: "math" }, digest: "e".repeat(64) }))
    assert.strictEqual(fixed.plan, plans.fixed.plan)
    assert.strictEqual(fixed.holdTokens, fixed.inputTokens + 6)
  })
})

describe("readClassification", () => {
  const output = {
    decision: {
      model: "decision-1",
      answers: {
        family: { type: "choice", choice: "math", probability: 0.7, probabilities: { coding: 0.3, math: 0.7 }, confidence: 0.1 },
        "task_type.math": { type: "choice", choice: "math.competition", probability: 1, probabilities: { "math.competition": 1 }, confidence: 1 },
        "task_type.writing": null,
        difficulty: { type: "score", score: 0.25, level: "easy", probability: 1, probabilities: [0, 1, 0, 0, 0], confidence: 1 },
        needs_tools: { type: "noul", probability: 0.2 }
      }
    }
  }

  it("maps the run's answers to the classifier's inputs; skipped questions are absent", () => {
    assert.deepStrictEqual(readClassification(output, {}), {
      familyProbabilities: { coding: 0.3, math: 0.7 },
      taskTypeProbabilities: { math: { "math.competition": 1 } },
      difficulty: { score: 0.25, probabilities: [0, 1, 0, 0, 0] },
      facets: { needs_tools: 0.2 }
    })
  })

  it("a fixed task type (with or without a domain) or domain replaces the family answer", () => {
    const fixedType = readClassification(output, { taskType: "coding.debugging", domain: "math" })
    assert.strictEqual((fixedType as any).fixedTaskType, "coding.debugging")
    assert.notProperty(fixedType, "familyProbabilities")
    assert.strictEqual((readClassification(output, { domain: "writing" }) as any).fixedDomain, "writing")
  })
})

describe("promptExcerpt", () => {
  it("keeps a task of up to HEAD_CHARS + TAIL_CHARS whole", () => {
    const text = "y".repeat(HEAD_CHARS + TAIL_CHARS)
    assert.strictEqual(promptExcerpt(text), text)
  })

  it("reads the head and the tail of a longer one, saying how much was left out", () => {
    const text = "H".repeat(HEAD_CHARS) + "M".repeat(10_000) + "T".repeat(TAIL_CHARS)
    assert.strictEqual(promptExcerpt(text), `${"H".repeat(HEAD_CHARS)}\n\n[... 10000 characters of the task omitted ...]\n\n${"T".repeat(TAIL_CHARS)}`)
  })

  it("never splits a surrogate pair at either cut, whatever the parity", () => {
    for (const shift of [0, 1, 2, 3]) {
      const text = "a".repeat(shift) + "\u{1F600}".repeat(6_000) + "b".repeat(shift % 2)
      const excerpt = promptExcerpt(text)
      assert.isFalse(LoneSurrogate.test(excerpt), `shift ${shift}`)
      assert.isAtMost(excerpt.length, HEAD_CHARS + TAIL_CHARS + 60)
    }
  })

  it("law: the excerpt of a long task starts with its head and ends with its tail", () =>
    fc.assert(fc.property(fc.integer({ min: HEAD_CHARS + TAIL_CHARS + 1, max: 40_000 }), fc.integer({ min: 0, max: 25 }), (length, seed) => {
      const text = Array.from({ length }, (_, index) => String.fromCharCode(97 + ((index * 7 + seed) % 26))).join("")
      const excerpt = promptExcerpt(text)
      return excerpt.startsWith(text.slice(0, HEAD_CHARS)) && excerpt.endsWith(text.slice(-TAIL_CHARS)) &&
        excerpt.includes(`[... ${length - HEAD_CHARS - TAIL_CHARS} characters of the task omitted ...]`)
    }), { numRuns: 50 }))
})
