/**
 * Training of the difficulty adjustment (`src/router/classifier/DifficultyModel.ts`): the three logits' weights
 * over the difficulty signals, fitted on the corpus rows that carry a difficulty label, with the true type's prior
 * as the offset.
 */
import type { DifficultyWeights } from "../../src/router/classifier/ClassifierModel.js"
import { difficultyDistribution } from "../../src/router/classifier/DifficultyModel.js"
import { DIFFICULTY_SIGNALS } from "../../src/router/classifier/DifficultySignals.js"

/** One labelled row for the adjustment: its true type's prior, its signals and its label (0, 1, 2). */
export interface DifficultyExample {
  readonly prior: Float64Array
  readonly signals: Float64Array
  readonly label: number
}

/** Fits the adjustment by full-batch gradient descent with an L2 pull (fixed steps, deterministic). */
export const trainDifficulty = (examples: ReadonlyArray<DifficultyExample>, steps = 300, rate = 0.5, l2 = 0.01): DifficultyWeights => {
  const weights = new Float64Array(3 * DIFFICULTY_SIGNALS)
  const bias = new Float64Array(3)
  const model = { weights, bias }
  for (let step = 0; step < steps && examples.length > 0; step++) {
    const gradWeights = new Float64Array(weights.length)
    const gradBias = new Float64Array(3)
    for (const example of examples) {
      const p = difficultyDistribution(model, example.prior, example.signals)
      for (let c = 0; c < 3; c++) {
        const g = p[c]! - (c === example.label ? 1 : 0)
        gradBias[c] = gradBias[c]! + g
        for (let s = 0; s < DIFFICULTY_SIGNALS; s++) {
          gradWeights[c * DIFFICULTY_SIGNALS + s] = gradWeights[c * DIFFICULTY_SIGNALS + s]! + g * example.signals[s]!
        }
      }
    }
    for (let c = 0; c < 3; c++) bias[c] = bias[c]! - (rate * gradBias[c]!) / examples.length
    for (let i = 0; i < weights.length; i++) {
      weights[i] = weights[i]! - rate * (gradWeights[i]! / examples.length + l2 * weights[i]!)
    }
  }
  return model
}
