/**
 * The difficulty estimate: P(easy, medium, hard) is the softmax of ln(the type priors mixed by the task-type
 * distribution) plus a small linear adjustment from the difficulty signals, trained on the corpus rows that carry a
 * difficulty label (math and coding sources) with the true type's prior as the offset. The router's five levels
 * split easy into trivial and easy (a short prompt leans trivial), keep medium as moderate, and split hard into hard
 * and expert, so summing the levels back by label gives exactly P(easy, medium, hard).
 */
import { softmax, type DifficultyWeights } from "./ClassifierModel.js"
import { DIFFICULTY_SIGNALS } from "./DifficultySignals.js"
import { typePrior } from "./TypePriors.js"

/** The corpus labels in order, lowest first. */
export const DIFFICULTY_CLASSES = ["easy", "medium", "hard"] as const

/** Share of `hard` that is `expert`. */
export const EXPERT_SHARE = 0.35

/** Share of `easy` that is `trivial` for a prompt under 80 characters, and for a longer one. */
export const TRIVIAL_SHARE = { short: 0.5, long: 0.25 } as const

/** The type priors mixed by a task-type distribution (types in `taskTypes` order). */
export const mixedPrior = (taskTypes: ReadonlyArray<string>, probabilities: Float64Array): Float64Array => {
  const mix = new Float64Array(3)
  taskTypes.forEach((type, k) => {
    const prior = typePrior(type).difficulty
    for (let c = 0; c < 3; c++) mix[c] = mix[c]! + probabilities[k]! * prior[c]!
  })
  return mix
}

/** P(easy, medium, hard) from the mixed prior and the prompt's difficulty signals. */
export const difficultyDistribution = (
  weights: DifficultyWeights,
  prior: Float64Array,
  signals: Float64Array
): Float64Array => {
  const logits = new Float64Array(3)
  for (let c = 0; c < 3; c++) {
    let value = Math.log(Math.max(prior[c]!, 1e-6)) + weights.bias[c]!
    for (let s = 0; s < DIFFICULTY_SIGNALS; s++) value += weights.weights[c * DIFFICULTY_SIGNALS + s]! * signals[s]!
    logits[c] = value
  }
  return softmax(logits)
}

/** The five router levels (trivial, easy, moderate, hard, expert) of P(easy, medium, hard). */
export const difficultyLevels = (distribution: Float64Array, totalChars: number): ReadonlyArray<number> => {
  const trivial = totalChars < 80 ? TRIVIAL_SHARE.short : TRIVIAL_SHARE.long
  const [easy, medium, hard] = [distribution[0]!, distribution[1]!, distribution[2]!]
  return [easy * trivial, easy * (1 - trivial), medium, hard * (1 - EXPERT_SHARE), hard * EXPERT_SHARE]
}
