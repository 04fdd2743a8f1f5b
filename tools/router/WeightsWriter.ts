/**
 * Writing the weights file (`src/router/classifier/WeightsFile.ts` reads it): the weight matrix quantized to int8
 * with one float32 scale per feature row, the other numbers rounded to 9 significant digits, fixed key order and
 * no dates, so the same training gives the same bytes.
 */
import type { ClassifierModel } from "../../src/router/classifier/ClassifierModel.js"
import { type WeightsJson, WEIGHTS_FORMAT } from "../../src/router/classifier/WeightsFile.js"

const rounded = (values: ArrayLike<number>): Array<number> => Array.from(values, (value) => Number(value.toPrecision(9)))

/** Quantizes a row-major matrix to int8 with one scale per row. */
export const quantize = (weights: Float32Array | Int8Array, columns: number) => {
  const rows = weights.length / columns
  const scales = new Float32Array(rows)
  const values = new Int8Array(weights.length)
  for (let row = 0; row < rows; row++) {
    let top = 0
    for (let k = 0; k < columns; k++) top = Math.max(top, Math.abs(weights[row * columns + k]!))
    const scale = Math.fround(top / 127)
    scales[row] = scale
    for (let k = 0; k < columns; k++) values[row * columns + k] = scale === 0 ? 0 : Math.round(weights[row * columns + k]! / scale)
  }
  return { scales, values }
}

/** The file's text for a model and its provenance. */
export const weightsJson = (model: ClassifierModel, provenance: unknown): string => {
  const columns = model.labels.taskTypes.length
  const { scales, values } = model.rowScales === null
    ? quantize(model.weights, columns)
    : { scales: model.rowScales, values: model.weights as Int8Array }
  const features = new Array<string>(model.featureRows.size)
  for (const [name, row] of model.featureRows) features[row] = name
  const file: WeightsJson = {
    format: WEIGHTS_FORMAT,
    provenance,
    labels: model.labels,
    temperature: Number(model.temperature.toPrecision(9)),
    bias: rounded(model.bias),
    difficulty: { weights: rounded(model.difficulty.weights), bias: rounded(model.difficulty.bias) },
    features: features.join("\n"),
    scales: Buffer.from(scales.buffer, scales.byteOffset, scales.byteLength).toString("base64"),
    values: Buffer.from(values.buffer, values.byteOffset, values.byteLength).toString("base64")
  }
  return `${JSON.stringify(file, null, 1)}\n`
}
