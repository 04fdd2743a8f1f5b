/**
 * The label rules the classifier's answers meet (docs/decisions.md, Router): the difficulty label is the most
 * probable label (never one with the lowest probability), the score ranking reads stays inside that label's band,
 * and a most probable family under 45% is noted in the reason under any policy, never in `low_confidence`
 * (decisions.md, Router: `low_confidence` is `domain_skills`'s rule alone).
 */
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { interpretClassification } from "../../../src/router/Classifier.js"
import { difficultyLabel, mostProbableLabel, scoreWithin } from "../../../src/router/classification/Difficulty.js"
import { rank } from "../../../src/router/Ranking.js"
import { FAMILY_LOW_CONFIDENCE_BELOW } from "../../../src/router/ScoringConstants.js"
import { fixtureInput, fixtureTaxonomy } from "../fixtures/RouterFixtures.js"

const answers = (levels: ReadonlyArray<number>) => ({
  familyProbabilities: { coding: 0.7, math: 0.3 },
  taskTypeProbabilities: {},
  difficulty: { score: levels.reduce((sum, p, index) => sum + (p * index) / 4, 0), probabilities: levels },
  facets: {}
})

describe("difficulty label", () => {
  it("is the most probable label, not the band of the expected score", () => {
    // trivial 0.4 and expert 0.4: the expected score 0.5 is "medium", which has only 0.2
    const result = interpretClassification(answers([0.4, 0, 0.2, 0, 0.4]), fixtureTaxonomy)
    const { label, probabilities } = result.classification.difficulty
    assert.deepStrictEqual(probabilities, { easy: 0.4, medium: 0.2, hard: 0.4 })
    assert.notStrictEqual(label, "medium")
    assert.strictEqual(label, "easy", "a tie goes to the label nearest the score's own, the lower of two equally near")
    assert.strictEqual(difficultyLabel(result.difficulty), label, "the score stays inside the label's band")
  })

  it("keeps the score when it already lies in the most probable label's band", () => {
    const result = interpretClassification(answers([0, 0.1, 0.2, 0.5, 0.2]), fixtureTaxonomy)
    assert.strictEqual(result.classification.difficulty.label, "hard")
    assert.closeTo(result.difficulty, 0.7, 1e-12)
  })

  it("label, probabilities and score always agree", () =>
    fc.assert(fc.property(
      fc.tuple(...[0, 1, 2, 3, 4].map(() => fc.integer({ min: 0, max: 20 }))).filter((values) => values.some((v) => v > 0)),
      (levels) => {
        const total = levels.reduce((sum, value) => sum + value, 0)
        const result = interpretClassification(answers(levels.map((value) => value / total)), fixtureTaxonomy)
        const { label, probabilities } = result.classification.difficulty
        assert.closeTo(probabilities[label], Math.max(probabilities.easy, probabilities.medium, probabilities.hard), 1e-12)
        assert.strictEqual(difficultyLabel(result.difficulty), label)
        assert.isTrue(result.difficulty >= 0 && result.difficulty <= 1)
      }
    )))

  it("ties prefer the label nearest the score; scores move to the nearest point of the band", () => {
    assert.strictEqual(mostProbableLabel({ easy: 0.5, medium: 0, hard: 0.5 }, 0.9), "hard")
    assert.strictEqual(mostProbableLabel({ easy: 0.3, medium: 0.4, hard: 0.3 }, 0.1), "medium")
    assert.strictEqual(scoreWithin(0.9, "medium"), 0.66)
    assert.strictEqual(scoreWithin(0.1, "hard"), 0.67)
    assert.strictEqual(scoreWithin(0.5, "easy"), 0.33)
    assert.strictEqual(scoreWithin(0.5, "medium"), 0.5)
  })
})

describe("an uncertain family", () => {
  for (const policy of ["balanced", "cost_efficient", "capability_heavy", "domain_skills"] as const) {
    it(`${policy}: is noted in the reason and leaves low_confidence to the top task type`, () => {
      const unsure = rank(fixtureInput({ policy, familyConfidence: { family: "coding", probability: 0.3 } }))
      assert.strictEqual(unsure._tag, "Ranked")
      if (unsure._tag !== "Ranked") return
      assert.isFalse(unsure.lowConfidence, "the top task type has probability 1")
      assert.include(unsure.reason, "uncertain classification: the most probable family, coding, has probability 30%")
      const sure = rank(fixtureInput({ policy, familyConfidence: { family: "coding", probability: FAMILY_LOW_CONFIDENCE_BELOW } }))
      assert.isTrue(sure._tag === "Ranked" && !sure.lowConfidence && !sure.reason.includes("uncertain"), policy)
      const typeUnsure = rank(fixtureInput({
        policy,
        taskDistribution: [
          { taskType: "coding.gen", probability: 0.35 },
          { taskType: "coding.review", probability: 0.33 },
          { taskType: "math.solve", probability: 0.32 }
        ],
        familyConfidence: { family: "coding", probability: 0.3 }
      }))
      assert.isTrue(typeUnsure._tag === "Ranked" && typeUnsure.lowConfidence === (policy === "domain_skills"), policy)
    })
  }
})
