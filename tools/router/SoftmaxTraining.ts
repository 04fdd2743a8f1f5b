/**
 * Training of the task-type model: multinomial logistic regression by AdaGrad stochastic gradient descent, rows
 * visited in a seeded shuffled order each epoch, each row's gradient scaled by its sample weight, with an L2 pull
 * on the weights a row touches and feature dropout (each feature of a row left out with probability `dropout` per
 * visit, so no single word or template phrase can carry a type alone). A row with a family but no task type
 * (SciBench calculus) is trained on the family: its target is the model's own distribution within the family.
 */
import { linearInto, type SparseVector } from "../../src/router/classifier/ClassifierModel.js"
import { seededRandom, shuffled } from "./SeededRandom.js"

/** One training row: its vector, its target and its weight. */
export interface TrainingExample {
  readonly vector: SparseVector
  /** A task-type index, or -1 - family index for a row labelled with a family only. */
  readonly target: number
  readonly weight: number
}

/** The optimizer's settings. */
export interface SoftmaxOptions {
  readonly epochs: number
  readonly learningRate: number
  readonly l2: number
  readonly dropout: number
  readonly seed: number
}

/** Trained weights: row-major features x classes, and a bias per class. */
export interface SoftmaxWeights {
  readonly weights: Float64Array
  readonly bias: Float64Array
}

const EPSILON = 1e-8

const softmaxInPlace = (z: Float64Array): void => {
  let top = -Infinity
  for (const value of z) top = Math.max(top, value)
  let total = 0
  for (let k = 0; k < z.length; k++) {
    z[k] = Math.exp(z[k]! - top)
    total += z[k]!
  }
  for (let k = 0; k < z.length; k++) z[k] = z[k]! / total
}

/** The gradient of the loss at the logits' softmax `p`, for a target (a class or a family's classes). */
const lossGradient = (p: Float64Array, target: number, familyOf: Int32Array, weight: number): Float64Array => {
  const gradient = new Float64Array(p.length)
  if (target >= 0) {
    for (let k = 0; k < p.length; k++) gradient[k] = weight * (p[k]! - (k === target ? 1 : 0))
    return gradient
  }
  const family = -1 - target
  let mass = 0
  for (let k = 0; k < p.length; k++) if (familyOf[k] === family) mass += p[k]!
  for (let k = 0; k < p.length; k++) {
    const wanted = familyOf[k] === family ? p[k]! / Math.max(mass, EPSILON) : 0
    gradient[k] = weight * (p[k]! - wanted)
  }
  return gradient
}

/** Trains the model over `features` feature rows and classes whose families are `familyOf`. */
export const trainSoftmax = (
  examples: ReadonlyArray<TrainingExample>,
  features: number,
  familyOf: Int32Array,
  options: SoftmaxOptions
): SoftmaxWeights => {
  const classes = familyOf.length
  const weights = new Float64Array(features * classes)
  const squares = new Float64Array(features * classes)
  const bias = new Float64Array(classes)
  const biasSquares = new Float64Array(classes)
  const random = seededRandom(options.seed)
  const order = examples.map((_, index) => index)
  const z = new Float64Array(classes)
  const { l2, learningRate } = options
  for (let epoch = 0; epoch < options.epochs; epoch++) {
    for (const index of shuffled(order, random)) {
      const example = examples[index]!
      const kept = dropFeatures(example.vector, options.dropout, random)
      linearInto(z, kept, weights, bias, classes)
      softmaxInPlace(z)
      const gradient = lossGradient(z, example.target, familyOf, example.weight)
      for (let j = 0; j < kept.ids.length; j++) {
        const row = kept.ids[j]! * classes
        const value = kept.values[j]!
        for (let k = 0; k < classes; k++) {
          const at = row + k
          const step = gradient[k]! * value + l2 * weights[at]!
          squares[at] = squares[at]! + step * step
          weights[at] = weights[at]! - (learningRate * step) / (Math.sqrt(squares[at]!) + EPSILON)
        }
      }
      for (let k = 0; k < classes; k++) {
        biasSquares[k] = biasSquares[k]! + gradient[k]! * gradient[k]!
        bias[k] = bias[k]! - (learningRate * gradient[k]!) / (Math.sqrt(biasSquares[k]!) + EPSILON)
      }
    }
  }
  return { weights, bias }
}

const dropFeatures = (vector: SparseVector, dropout: number, random: ReturnType<typeof seededRandom>): SparseVector => {
  if (dropout === 0) return vector
  const ids: Array<number> = []
  const values: Array<number> = []
  for (let j = 0; j < vector.ids.length; j++) {
    if (random.next() < dropout) continue
    ids.push(vector.ids[j]!)
    values.push(vector.values[j]!)
  }
  return { ids: Int32Array.from(ids), values: Float32Array.from(values) }
}
