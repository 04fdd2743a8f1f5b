/**
 * From labelled rows to a model: encode every row once, weight the rows (`SampleWeights.ts`), choose the fold's
 * vocabulary, train the task-type model (`SoftmaxTraining.ts`) and the difficulty adjustment, and keep the
 * MAX_FEATURES feature rows with the largest weights. `heldOutLogits` runs the by-source cross-validation: each
 * fold's rows are predicted by a model trained without the fold's sources. The final model trains on every row.
 */
import type { ClassifierLabels, ClassifierModel } from "../../src/router/classifier/ClassifierModel.js"
import { mixedPrior } from "../../src/router/classifier/DifficultyModel.js"
import { type DifficultyExample, trainDifficulty } from "./DifficultyTraining.js"
import { type EncodedCorpus, encodeRows, rowVector, selectVocabulary, type VocabularyRule } from "./FeatureEncoding.js"
import { sampleWeights } from "./SampleWeights.js"
import { type SoftmaxOptions, type TrainingExample, trainSoftmax } from "./SoftmaxTraining.js"
import { linearInto } from "../../src/router/classifier/ClassifierModel.js"
import { trainingLabel } from "../../src/router/classifier/LanguageRule.js"
import { sourceFolds } from "./SourceFolds.js"
import type { LabelledPrompt } from "./TrainingCorpus.js"

/** Every setting of a training run (recorded in the weights' provenance). */
export interface TrainerSettings {
  readonly vocabulary: VocabularyRule
  readonly softmax: SoftmaxOptions
  readonly maxFeatures: number
}

/** The settings `npm run router:train` uses. */
export const DEFAULT_SETTINGS: TrainerSettings = {
  vocabulary: { minRows: 3, minSources: 2 },
  softmax: { epochs: 6, learningRate: 0.08, l2: 1e-4, dropout: 0.25, seed: 20_261_124 },
  maxFeatures: 40_000
}

/** The rows, encoded, with their weights and label indices. */
export interface PreparedCorpus {
  readonly labels: ClassifierLabels
  readonly rows: ReadonlyArray<LabelledPrompt>
  readonly encoded: EncodedCorpus
  readonly weights: Float64Array
  readonly familyOf: Int32Array
  /** Per row: a task-type index, or -1 - family index. */
  readonly targets: Int32Array
}

/** The index of the family a row is trained as (its own, or `general` for a general request in another language). */
export const trainingFamily = (labels: ClassifierLabels, row: LabelledPrompt): number =>
  labels.families.indexOf(trainingLabel(row).family)

/** Encodes and weights the rows, each with its training label (`LanguageRule.trainingLabel`). */
export const prepareCorpus = (labels: ClassifierLabels, rows: ReadonlyArray<LabelledPrompt>): PreparedCorpus => {
  const familyOf = Int32Array.from(labels.taskTypes, (type) => labels.families.indexOf(type.family))
  const trained = rows.map((row) => ({ ...row, ...trainingLabel(row) }))
  const targets = Int32Array.from(trained, (row) =>
    row.taskType === null
      ? -1 - labels.families.indexOf(row.family)
      : labels.taskTypes.findIndex((type) => type.id === row.taskType))
  return { labels, rows, encoded: encodeRows(rows.map((row) => row.text)), weights: sampleWeights(trained), familyOf, targets }
}

const DIFFICULTY_INDEX: ReadonlyMap<string, number> = new Map([["easy", 0], ["medium", 1], ["hard", 2]])

const difficultyExamples = (data: PreparedCorpus, training: ReadonlyArray<number>): Array<DifficultyExample> =>
  training.flatMap((index) => {
    const row = data.rows[index]!
    const target = data.targets[index]!
    if (row.difficulty === null || target < 0) return []
    const oneHot = new Float64Array(data.labels.taskTypes.length)
    oneHot[target] = 1
    const types = data.labels.taskTypes.map((type) => type.id)
    return [{ prior: mixedPrior(types, oneHot), signals: data.encoded.rows[index]!.difficulty, label: DIFFICULTY_INDEX.get(row.difficulty)! }]
  })

const pruneRows = (weights: Float64Array, classes: number, size: number, keep: number): Int32Array => {
  const strength = Array.from({ length: size }, (_, row) => {
    let top = 0
    for (let k = 0; k < classes; k++) top = Math.max(top, Math.abs(weights[row * classes + k]!))
    return [row, top] as const
  })
  const kept = strength.sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, keep).map(([row]) => row).sort((a, b) => a - b)
  return Int32Array.from(kept)
}

/** Trains a model (temperature 1) on the given rows. */
export const trainOn = (data: PreparedCorpus, training: ReadonlyArray<number>, settings: TrainerSettings): ClassifierModel => {
  const sources = data.rows.map((row) => row.source)
  const vocabulary = selectVocabulary(data.encoded, sources, training, settings.vocabulary)
  const examples = training.map((index): TrainingExample => ({
    vector: rowVector(data.encoded.rows[index]!, vocabulary.rows),
    target: data.targets[index]!,
    weight: data.weights[index]!
  }))
  const classes = data.labels.taskTypes.length
  const trained = trainSoftmax(examples, vocabulary.size, data.familyOf, settings.softmax)
  const kept = pruneRows(trained.weights, classes, vocabulary.size, settings.maxFeatures)
  const nameOfRow = new Array<string>(vocabulary.size)
  vocabulary.rows.forEach((row, id) => {
    if (row >= 0) nameOfRow[row] = data.encoded.names[id]!
  })
  const weights = new Float32Array(kept.length * classes)
  kept.forEach((row, at) => weights.set(trained.weights.subarray(row * classes, (row + 1) * classes), at * classes))
  return {
    labels: data.labels,
    featureRows: new Map(Array.from(kept, (row, at) => [nameOfRow[row]!, at] as const)),
    weights,
    rowScales: null,
    bias: trained.bias,
    temperature: 1,
    difficulty: trainDifficulty(difficultyExamples(data, training))
  }
}

/** Held-out logits of every corpus row (null for the seeds) and the fold of each, from the by-source folds. */
export const heldOutLogits = (data: PreparedCorpus, settings: TrainerSettings) => {
  const folds = sourceFolds(data.rows)
  const foldCount = Math.max(0, ...folds.values()) + 1
  const logits: Array<Float64Array | null> = data.rows.map(() => null)
  const models: Array<ClassifierModel> = []
  for (let fold = 0; fold < foldCount; fold++) {
    const training = data.rows.flatMap((row, index) => (folds.get(row.source) === fold ? [] : [index]))
    const model = trainOn(data, training, settings)
    models.push(model)
    const lookup = Int32Array.from(data.encoded.names, (name) => model.featureRows.get(name) ?? -1)
    data.rows.forEach((row, index) => {
      if (folds.get(row.source) !== fold) return
      const classes = model.labels.taskTypes.length
      logits[index] = linearInto(new Float64Array(classes), rowVector(data.encoded.rows[index]!, lookup), model.weights, model.bias, classes, model.rowScales)
    })
  }
  return { logits, folds, models }
}
