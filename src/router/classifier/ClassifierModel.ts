/**
 * The trained model and its arithmetic, shared by training and inference. A prompt is a sparse vector: each
 * lexical feature weighs 1/sqrt(number of lexical features), so a long paste does not drown its request, and each
 * signal feature weighs SIGNAL_VALUE. The task-type logits are a linear function of it (one weight row per known
 * feature, one bias per type); probabilities are the softmax of the logits divided by the calibrated temperature.
 */
import type { PromptFeatures } from "./TextFeatures.js"

/** The value of each signal feature in the vector. */
export const SIGNAL_VALUE = 1

/** The classifier's label set, in the taxonomy file's order. */
export interface ClassifierLabels {
  readonly families: ReadonlyArray<string>
  readonly taskTypes: ReadonlyArray<{ readonly id: string; readonly family: string }>
}

/** The difficulty adjustment: three logits (easy, medium, hard) from the difficulty signals. */
export interface DifficultyWeights {
  /** Row-major 3 x DIFFICULTY_SIGNALS. */
  readonly weights: Float64Array
  readonly bias: Float64Array
}

/** A loaded or freshly trained model. */
export interface ClassifierModel {
  readonly labels: ClassifierLabels
  /** Feature name to weight row. */
  readonly featureRows: ReadonlyMap<string, number>
  /** Row-major: rows x task types; int8 when loaded from the weights file, each row then scaled by `rowScales`. */
  readonly weights: Float32Array | Int8Array
  /** One scale per row for int8 weights; null for float weights. */
  readonly rowScales: Float32Array | null
  readonly bias: Float64Array
  readonly temperature: number
  readonly difficulty: DifficultyWeights
}

/** A sparse feature vector: parallel arrays of feature ids and values. */
export interface SparseVector {
  readonly ids: Int32Array
  readonly values: Float32Array
}

/** Sets `into` to `bias + W x` for a row-major weight matrix with `width` columns (rows scaled by `rowScales`). */
export const linearInto = (
  into: Float64Array,
  vector: SparseVector,
  weights: Float32Array | Float64Array | Int8Array,
  bias: Float64Array,
  width: number,
  rowScales: Float32Array | null = null
): Float64Array => {
  for (let k = 0; k < width; k++) into[k] = bias[k]!
  for (let j = 0; j < vector.ids.length; j++) {
    const id = vector.ids[j]!
    const row = id * width
    const value = rowScales === null ? vector.values[j]! : vector.values[j]! * rowScales[id]!
    for (let k = 0; k < width; k++) into[k] = into[k]! + weights[row + k]! * value
  }
  return into
}

/** Softmax of `logits / temperature`, in place of a new array. */
export const softmax = (logits: Float64Array, temperature = 1): Float64Array => {
  let top = -Infinity
  for (const value of logits) top = Math.max(top, value / temperature)
  const out = new Float64Array(logits.length)
  let total = 0
  for (let k = 0; k < logits.length; k++) {
    out[k] = Math.exp(logits[k]! / temperature - top)
    total += out[k]!
  }
  for (let k = 0; k < out.length; k++) out[k] = out[k]! / total
  return out
}

/** Adds one feature's weight row, times `value`, into the logits (int8 rows scaled by their row scale). */
const addRow = (logits: Float64Array, model: ClassifierModel, row: number, value: number): void => {
  const width = logits.length
  const offset = row * width
  const { rowScales, weights } = model
  const scaled = rowScales === null ? value : value * rowScales[row]!
  for (let k = 0; k < width; k++) logits[k] = logits[k]! + weights[offset + k]! * scaled
}

/** The model's raw task-type logits for a prompt's features (the arithmetic of `linearInto`, without a vector). */
export const typeLogits = (model: ClassifierModel, features: PromptFeatures): Float64Array => {
  const logits = Float64Array.from(model.bias)
  const rows = model.featureRows
  const lexicalValue = Math.fround(1 / Math.sqrt(Math.max(1, features.lexical.length)))
  for (const name of features.lexical) {
    const row = rows.get(name)
    if (row !== undefined) addRow(logits, model, row, lexicalValue)
  }
  for (const name of features.signals) {
    const row = rows.get(name)
    if (row !== undefined) addRow(logits, model, row, SIGNAL_VALUE)
  }
  return logits
}
