import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import {
  answerSummary,
  confidenceOf,
  normalizeProbabilities,
  shapeAnswer
} from "../../src/runs/Answers.js"
import type { ChoiceAnswer, ScoreAnswer } from "../../src/runs/Answers.js"
import { canonicalDigest, sha256Hex } from "../../src/encoding/CanonicalJson.js"
import type { QuestionOption as PlanOption } from "../../src/providers/ModelProvider.js"
import { averageDraws, rotateOptions } from "../../src/runs/Draws.js"

const options = (...names: ReadonlyArray<string>): ReadonlyArray<PlanOption> =>
  names.map((name) => ({ name, description: null }))
const yesNo = options("yes", "no")

describe("shapeAnswer", () => {
  it("shapes a noul as the probability of yes", () => {
    assert.deepStrictEqual(shapeAnswer({ type: "noul", options: yesNo }, [3, 1]), { type: "noul", probability: 0.75 })
  })

  it("shapes a choice with every option's probability and the confidence", () => {
    const answer = shapeAnswer({ type: "choice", options: options("red", "green", "blue") }, [0.2, 0.6, 0.2])
    assert.strictEqual(answer.type, "choice")
    const choice = answer as ChoiceAnswer
    assert.strictEqual(choice.choice, "green")
    assert.closeTo(choice.probability, 0.6, 1e-12)
    assert.deepStrictEqual(Object.keys(choice.probabilities), ["red", "green", "blue"])
    const entropy = -(0.2 * Math.log(0.2) * 2 + 0.6 * Math.log(0.6))
    assert.closeTo(choice.confidence, 1 - entropy / Math.log(3), 1e-12)
  })

  it("shapes a score as the expected level over levels - 1", () => {
    const answer = shapeAnswer({ type: "score", options: options("low", "mid", "high") }, [0.1, 0.3, 0.6]) as ScoreAnswer
    assert.strictEqual(answer.type, "score")
    assert.closeTo(answer.score, (0.3 * 1 + 0.6 * 2) / 2, 1e-12)
    assert.strictEqual(answer.level, "high")
    assert.closeTo(answer.probability, 0.6, 1e-12)
    assert.strictEqual(answer.probabilities.length, 3)
  })

  it("is certain for a one-hot distribution, uncertain for a uniform one, and breaks ties by order", () => {
    assert.strictEqual(confidenceOf([1, 0, 0]), 1)
    assert.closeTo(confidenceOf([0.25, 0.25, 0.25, 0.25]), 0, 1e-12)
    const tie = shapeAnswer({ type: "choice", options: options("a", "b") }, [0.5, 0.5]) as ChoiceAnswer
    assert.strictEqual(tie.choice, "a")
    assert.deepStrictEqual(normalizeProbabilities([0, 0]), [0.5, 0.5])
    assert.deepStrictEqual(normalizeProbabilities([Number.NaN, -1, 2]), [0, 0, 1])
  })

  const weights = fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { minLength: 2, maxLength: 20 })

  it("choice probabilities sum to 1 and confidence is in 0..1", () => fc.assert(fc.property(weights, (ws) => {
    const names = ws.map((_, i) => `o${i}`)
    const answer = shapeAnswer({ type: "choice", options: options(...names) }, ws) as ChoiceAnswer
    const sum = Object.values(answer.probabilities).reduce((a, b) => a + b, 0)
    assert.closeTo(sum, 1, 1e-9)
    assert.isTrue(answer.confidence >= 0 && answer.confidence <= 1)
    assert.strictEqual(answer.probability, Math.max(...Object.values(answer.probabilities)))
  })))

  it("score is in 0..1 and its probabilities sum to 1", () => fc.assert(fc.property(weights, (ws) => {
    const names = ws.map((_, i) => `l${i}`)
    const answer = shapeAnswer({ type: "score", options: options(...names) }, ws) as ScoreAnswer
    assert.closeTo(answer.probabilities.reduce((a, b) => a + b, 0), 1, 1e-9)
    assert.isTrue(answer.score >= 0 && answer.score <= 1)
    assert.isTrue(answer.confidence >= 0 && answer.confidence <= 1)
  })))

  it("summarizes an answer for later questions", () => {
    assert.strictEqual(answerSummary(yesNo, [0.126, 0.874]), "no (probability 0.87)")
  })

  it("digests output (`output_digest`) as SHA-256 of canonical JSON", () => {
    const output = { answers: { q: { type: "noul", probability: 0.5 } } }
    assert.strictEqual(canonicalDigest(output), sha256Hex(`{"answers":{"q":{"probability":0.5,"type":"noul"}}}`))
  })
})

describe("draw rotations", () => {
  it("shifts the option order by the draw number", () => {
    const abc = ["a", "b", "c"]
    assert.deepStrictEqual(rotateOptions(abc, 0), ["a", "b", "c"])
    assert.deepStrictEqual(rotateOptions(abc, 1), ["b", "c", "a"])
    assert.deepStrictEqual(rotateOptions(abc, 2), ["c", "a", "b"])
    assert.deepStrictEqual(rotateOptions(abc, 4), ["b", "c", "a"])
    // One draw's probabilities, read in its rotation, come back in the options' own order.
    assert.deepStrictEqual(averageDraws(3, [{ draw: 1, probabilities: [0.7, 0.2, 0.1] }]), [0.1, 0.7, 0.2])
  })

  it("averages the draws by option, cancelling a preference for the first letter", () => {
    // A model that puts 0.6 on whatever comes first, over the options a, b, c.
    const firstLetterBias = [0.6, 0.2, 0.2]
    const averaged = averageDraws(3, [0, 1, 2].map((draw) => ({ draw, probabilities: firstLetterBias })))
    for (const p of averaged) assert.closeTo(p, 1 / 3, 1e-12)
    const two = averageDraws(2, [{ draw: 0, probabilities: [0.9, 0.1] }, { draw: 1, probabilities: [0.7, 0.3] }])
    assert.closeTo(two[0]!, (0.9 + 0.3) / 2, 1e-12)
    assert.closeTo(two[1]!, (0.1 + 0.7) / 2, 1e-12)
  })
})
