import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import {
  type ClassificationAnswers,
  classificationQuestions,
  interpretClassification,
  taskTypeQuestionName
} from "../../src/router/Classifier.js"
import { difficultyLabel, labelProbabilities } from "../../src/router/classification/Difficulty.js"
import { fixtureTaxonomy, realTaxonomy } from "./fixtures/RouterFixtures.js"

const rest = {
  taskTypeProbabilities: {},
  difficulty: { score: 0.5, probabilities: [0.1, 0.2, 0.4, 0.2, 0.1] },
  facets: { needs_code_output: 0.9 }
}

const sum = (values: Iterable<number>) => [...values].reduce((total, value) => total + value, 0)

describe("classificationQuestions", () => {
  it("asks the family, the task type within each family, the difficulty and the facets", () => {
    const questions = classificationQuestions(realTaxonomy, {})
    assert.strictEqual(questions.family?.type, "choice")
    assert.deepStrictEqual(Object.keys(questions.family!.criteria), [...realTaxonomy.families])
    assert.deepStrictEqual(Object.keys(questions.taskTypes), [...realTaxonomy.families])
    for (const [family, question] of Object.entries(questions.taskTypes)) {
      const options = Object.keys(question.criteria)
      assert.deepStrictEqual(options, realTaxonomy.taskTypesByFamily.get(family)!.map((type) => type.id))
      assert.isTrue(options.length >= 2 && options.length <= 20, family)
      assert.deepStrictEqual(Object.keys(question).sort(), ["criteria", "instructions", "type"])
    }
    assert.strictEqual(
      questions.taskTypes["coding"]!.criteria["coding.debugging"],
      "Diagnose a failing program from an error message, stack trace or failing test and propose a fix."
    )
    assert.deepStrictEqual(questions.difficulty.criteria, ["trivial", "easy", "moderate", "hard", "expert"])
    assert.deepStrictEqual(Object.keys(questions.facets), [
      "needs_code_output",
      "needs_long_context",
      "multi_step",
      "non_english",
      "needs_tools"
    ])
    for (const facet of Object.values(questions.facets)) {
      assert.deepStrictEqual(Object.keys(facet).sort(), ["instructions", "type"])
      assert.strictEqual(facet.type, "noul")
    }
    assert.strictEqual(taskTypeQuestionName("coding"), "task_type.coding")
  })

  it("asks no family or task type when either is fixed", () => {
    for (const fixed of [{ taskType: "coding.debugging" }, { domain: "math" }]) {
      const questions = classificationQuestions(realTaxonomy, fixed)
      assert.isNull(questions.family)
      assert.deepStrictEqual(questions.taskTypes, {})
      assert.strictEqual(questions.difficulty.type, "score")
    }
  })

  it("a family with one task type has no task-type question", () => {
    assert.deepStrictEqual(Object.keys(classificationQuestions(fixtureTaxonomy, {}).taskTypes), ["coding"])
  })
})

describe("interpretClassification (fixture, by hand)", () => {
  it("P(type) = P(family) x P(type | family), most probable first", () => {
    // coding 0.7 x (gen 0.8, review 0.2) = 0.56, 0.14; math 0.3 x solve 1 (single type, not asked) = 0.3
    const result = interpretClassification({
      ...rest,
      familyProbabilities: { coding: 0.7, math: 0.3 },
      taskTypeProbabilities: { coding: { "coding.gen": 0.8, "coding.review": 0.2 } }
    }, fixtureTaxonomy)
    const distribution = result.taskDistribution.map(({ probability, taskType }) => [taskType, probability])
    assert.deepStrictEqual(distribution.map(([id]) => id), ["coding.gen", "math.solve", "coding.review"])
    assert.closeTo(distribution[0]![1] as number, 0.56, 1e-12)
    assert.closeTo(distribution[1]![1] as number, 0.3, 1e-12)
    assert.closeTo(distribution[2]![1] as number, 0.14, 1e-12)
    assert.deepStrictEqual(result.classification.domain, { label: "coding", probabilities: { coding: 0.7, math: 0.3 } })
    assert.deepStrictEqual(result.classification.task_type.label, "coding.gen")
    assert.deepStrictEqual(result.classification.task_type.family, "coding")
    assert.isFalse(result.classification.task_type.fixed)
    assert.strictEqual(result.topTaskType, "coding.gen")
    // levels trivial 0.1 + easy 0.2 = easy 0.3; moderate 0.4 = medium; hard 0.2 + expert 0.1 = hard 0.3
    assert.strictEqual(result.classification.difficulty.label, "medium")
    const { easy, hard, medium } = result.classification.difficulty.probabilities
    assert.closeTo(easy, 0.3, 1e-12)
    assert.closeTo(medium, 0.4, 1e-12)
    assert.closeTo(hard, 0.3, 1e-12)
    assert.deepStrictEqual(result.classification.facets, { needs_code_output: 0.9 })
    assert.strictEqual(result.difficulty, 0.5)
  })

  it("families under 5% leave the task-type distribution, not the domain probabilities", () => {
    // coding 0.97 alone, renormalized: gen 0.8, review 0.2
    const result = interpretClassification({
      ...rest,
      familyProbabilities: { coding: 0.97, math: 0.03 },
      taskTypeProbabilities: { coding: { "coding.gen": 0.8, "coding.review": 0.2 } }
    }, fixtureTaxonomy)
    assert.deepStrictEqual(result.taskDistribution.map(({ taskType }) => taskType), ["coding.gen", "coding.review"])
    assert.closeTo(result.taskDistribution[0]!.probability, 0.8, 1e-12)
    assert.strictEqual(result.classification.domain.probabilities["math"], 0.03)
  })

  it("unnormalized family answers are normalized; an unanswered family counts as its default type", () => {
    const answers = { ...rest, familyProbabilities: { coding: 1.2, math: 0.8 } }
    const result = interpretClassification(answers, fixtureTaxonomy)
    assert.deepStrictEqual(result.classification.domain.probabilities, { coding: 0.6, math: 0.4 })
    assert.deepStrictEqual(result.taskDistribution, [
      { taskType: "coding.gen", probability: 0.6 },
      { taskType: "math.solve", probability: 0.4 }
    ])
  })

  it("a fixed task type wins over a fixed domain; a fixed domain uses its default type", () => {
    const both = { ...rest, fixedTaskType: "coding.review", fixedDomain: "math" }
    const byType = interpretClassification(both, fixtureTaxonomy)
    assert.deepStrictEqual(byType.classification.task_type, {
      label: "coding.review",
      family: "coding",
      top: [{ label: "coding.review", probability: 1 }],
      fixed: true
    })
    assert.deepStrictEqual(byType.classification.domain, { label: "coding", probabilities: { coding: 1, math: 0 } })
    assert.deepStrictEqual(byType.taskDistribution, [{ taskType: "coding.review", probability: 1 }])
    const byDomain = interpretClassification({ ...rest, fixedDomain: "math" }, fixtureTaxonomy)
    assert.strictEqual(byDomain.topTaskType, "math.solve")
    assert.isTrue(byDomain.classification.task_type.fixed)
  })
})

describe("difficulty labels", () => {
  it("easy < 0.34 <= medium < 0.67 <= hard", () => {
    assert.deepStrictEqual([0, 0.3399, 0.34, 0.6699, 0.67, 1].map(difficultyLabel), [
      "easy",
      "easy",
      "medium",
      "medium",
      "hard",
      "hard"
    ])
    assert.deepStrictEqual(labelProbabilities([1, 0, 0, 0, 0]), { easy: 1, medium: 0, hard: 0 })
    assert.deepStrictEqual(labelProbabilities([0, 0, 0, 0.5, 0.5]), { easy: 0, medium: 0, hard: 1 })
  })
})

const familyAnswers = fc
  .tuple(...realTaxonomy.families.map(() => fc.integer({ min: 0, max: 1000 })))
  .filter((values) => values.some((value) => value > 0))
  .map((values) => Object.fromEntries(realTaxonomy.families.map((family, index) => [family, values[index]! / 1000])))

const conditionalAnswers = fc.tuple(
  ...realTaxonomy.families.map((family) =>
    fc.tuple(...realTaxonomy.taskTypesByFamily.get(family)!.map(() => fc.integer({ min: 0, max: 100 })))
  )
).map((perFamily) =>
  Object.fromEntries(realTaxonomy.families.map((family, f) => [
    family,
    Object.fromEntries(realTaxonomy.taskTypesByFamily.get(family)!.map((type, t) => [type.id, perFamily[f]![t]!]))
  ]))
)

const levels = fc.tuple(...[0, 1, 2, 3, 4].map(() => fc.integer({ min: 0, max: 100 })))
  .filter((values) => values.some((value) => value > 0))
  .map((values) => values.map((value) => value / sum(values)))

describe("interpretClassification laws (shipped taxonomy)", () => {
  it("domain probabilities cover every family and sum to 1; the distribution too, top five first", () =>
    fc.assert(fc.property(familyAnswers, conditionalAnswers, levels, (families, conditional, probabilities) => {
      const answers: ClassificationAnswers = {
        familyProbabilities: families,
        taskTypeProbabilities: conditional,
        difficulty: { score: 0.5, probabilities },
        facets: {}
      }
      const { classification, taskDistribution } = interpretClassification(answers, realTaxonomy)
      assert.deepStrictEqual(Object.keys(classification.domain.probabilities), [...realTaxonomy.families])
      assert.closeTo(sum(Object.values(classification.domain.probabilities)), 1, 1e-9)
      assert.closeTo(sum(taskDistribution.map((item) => item.probability)), 1, 1e-9)
      assert.closeTo(sum(Object.values(classification.difficulty.probabilities)), 1, 1e-9)
      const top = classification.task_type.top
      assert.isAtMost(top.length, 5)
      assert.deepStrictEqual(top.map((item) => item.label), taskDistribution.slice(0, 5).map((item) => item.taskType))
      top.slice(1).forEach((item, index) => assert.isAtMost(item.probability, top[index]!.probability))
      for (const { taskType } of taskDistribution) {
        const family = realTaxonomy.taskTypesById.get(taskType)!.family
        assert.isAtLeast(classification.domain.probabilities[family]!, 0.05 - 1e-12)
      }
    })))

  it("fixed labels have probability 1.0", () =>
    fc.assert(fc.property(
      fc.constantFrom(...realTaxonomy.taskTypes.map((type) => type.id)),
      fc.constantFrom(...realTaxonomy.families),
      fc.boolean(),
      (taskType, domain, byType) => {
        const source = byType ? { fixedTaskType: taskType } : { fixedDomain: domain }
        const { classification, taskDistribution } = interpretClassification({ ...rest, ...source }, realTaxonomy)
        const expected = byType ? taskType : realTaxonomy.familyDefaults.get(domain)!.id
        assert.isTrue(classification.task_type.fixed)
        assert.deepStrictEqual(classification.task_type.top, [{ label: expected, probability: 1 }])
        assert.deepStrictEqual(taskDistribution, [{ taskType: expected, probability: 1 }])
        assert.strictEqual(classification.domain.probabilities[classification.domain.label], 1)
        assert.strictEqual(sum(Object.values(classification.domain.probabilities)), 1)
      }
    )))
})
