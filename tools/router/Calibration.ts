/**
 * Temperature scaling: one temperature T divides every task-type logit, chosen to minimize the negative
 * log-likelihood of the true family over predictions made on held-out sources (the cross-validation's), so the
 * probabilities the router shows are as confident as the classifier is on prompts in a style it never saw. The
 * search is a golden-section search over ln T in [ln 0.25, ln 8], a fixed number of steps (deterministic).
 */
import { softmax } from "../../src/router/classifier/ClassifierModel.js"

/** One held-out prediction: the task-type logits and the index of the true family. */
export interface HeldOutPrediction {
  readonly logits: Float64Array
  readonly family: number
}

const STEPS = 60
const LOWEST = Math.log(0.25)
const HIGHEST = Math.log(8)

/** The family distribution of task-type probabilities. */
export const familyProbabilities = (types: Float64Array, familyOf: Int32Array, families: number): Float64Array => {
  const out = new Float64Array(families)
  for (let k = 0; k < types.length; k++) out[familyOf[k]!] = out[familyOf[k]!]! + types[k]!
  return out
}

/** Mean negative log-likelihood of the true families at a temperature. */
export const familyLoss = (
  predictions: ReadonlyArray<HeldOutPrediction>,
  familyOf: Int32Array,
  families: number,
  temperature: number
): number => {
  let total = 0
  for (const prediction of predictions) {
    const p = familyProbabilities(softmax(prediction.logits, temperature), familyOf, families)
    total -= Math.log(Math.max(p[prediction.family]!, 1e-12))
  }
  return total / Math.max(1, predictions.length)
}

/** The temperature that minimizes the family loss of held-out predictions. */
export const fitTemperature = (
  predictions: ReadonlyArray<HeldOutPrediction>,
  familyOf: Int32Array,
  families: number
): number => {
  const ratio = (Math.sqrt(5) - 1) / 2
  let low = LOWEST
  let high = HIGHEST
  const loss = (logT: number) => familyLoss(predictions, familyOf, families, Math.exp(logT))
  let a = high - ratio * (high - low)
  let b = low + ratio * (high - low)
  let lossA = loss(a)
  let lossB = loss(b)
  for (let step = 0; step < STEPS; step++) {
    if (lossA <= lossB) {
      high = b
      b = a
      lossB = lossA
      a = high - ratio * (high - low)
      lossA = loss(a)
    } else {
      low = a
      a = b
      lossA = lossB
      b = low + ratio * (high - low)
      lossB = loss(b)
    }
  }
  return Math.exp((low + high) / 2)
}
