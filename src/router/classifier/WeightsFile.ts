/**
 * The committed weights file (`data/router-classifier.json`): a JSON manifest with the provenance of the training
 * (corpus and seed digests, settings, licences), the labels, the calibrated temperature, the biases, the difficulty
 * adjustment and the feature names (one string, newline-separated), and the weight matrix quantized to int8 with
 * one float32 scale per feature row (both base64; inference reads the int8 values as they are). Writing is
 * deterministic (fixed key order, no dates), so the same training gives the same bytes.
 */
import { readFileSync } from "node:fs"
import { shippedFile } from "../../config/ProjectRoot.js"
import type { ClassifierModel } from "./ClassifierModel.js"

/** The format tag of the file. */
export const WEIGHTS_FORMAT = "arbiter-router-classifier/1"

/** The shipped weights file. */
export const DEFAULT_WEIGHTS_PATH = shippedFile("data", "router-classifier.json")

/** The JSON shape of the file. */
export interface WeightsJson {
  readonly format: string
  readonly provenance: unknown
  readonly labels: ClassifierModel["labels"]
  readonly temperature: number
  readonly bias: ReadonlyArray<number>
  readonly difficulty: { readonly weights: ReadonlyArray<number>; readonly bias: ReadonlyArray<number> }
  readonly features: string
  readonly scales: string
  readonly values: string
}

/** Reads a model from the file's text; throws with a message naming what is wrong. */
export const parseWeights = (text: string, where: string): ClassifierModel => {
  const file = JSON.parse(text) as WeightsJson
  if (file.format !== WEIGHTS_FORMAT) throw new Error(`${where}: not a ${WEIGHTS_FORMAT} file`)
  const columns = file.labels.taskTypes.length
  const features = file.features.split("\n")
  const scaleBytes = Buffer.from(file.scales, "base64")
  const valueBytes = Buffer.from(file.values, "base64")
  const scales = new Float32Array(scaleBytes.buffer.slice(scaleBytes.byteOffset, scaleBytes.byteOffset + scaleBytes.byteLength))
  const weights = new Int8Array(valueBytes.buffer, valueBytes.byteOffset, valueBytes.byteLength)
  if (scales.length !== features.length || weights.length !== features.length * columns) {
    throw new Error(`${where}: the weight matrix does not match ${features.length} features x ${columns} task types`)
  }
  const featureRows = new Map<string, number>()
  for (let row = 0; row < features.length; row++) featureRows.set(features[row]!, row)
  return {
    labels: file.labels,
    featureRows,
    weights,
    rowScales: scales,
    bias: Float64Array.from(file.bias),
    temperature: file.temperature,
    difficulty: { weights: Float64Array.from(file.difficulty.weights), bias: Float64Array.from(file.difficulty.bias) }
  }
}

/** Reads a weights file. */
export const readWeights = (path: string): ClassifierModel => parseWeights(readFileSync(path, "utf8"), path)
