/**
 * One whole training, as a pure function of its inputs: the by-source cross-validation (whose held-out predictions
 * fit the temperature), the final model on every row, and the weights file's text with its provenance. The same
 * inputs give the same bytes, which `npm run router:train` relies on and the tests check on a tiny corpus.
 */
import { fitTemperature, type HeldOutPrediction } from "./Calibration.js"
import type { ClassifierLabels, ClassifierModel } from "../../src/router/classifier/ClassifierModel.js"
import { EXCLUSION_RULES } from "./CorpusRules.js"
import { MAX_SEED_WEIGHT, MAX_WEIGHT, SEED_SHARE, SEED_SOURCE, TYPE_CAP, WRITTEN_SOURCE_PREFIX } from "./SampleWeights.js"
import type { LabelledPrompt } from "./TrainingCorpus.js"
import {
  heldOutLogits,
  prepareCorpus,
  type PreparedCorpus,
  type TrainerSettings,
  trainingFamily,
  trainOn
} from "./TrainingPipeline.js"
import { weightsJson } from "./WeightsWriter.js"

/** What a training reads, with the digests recorded as provenance. */
export interface BuildInput {
  readonly labels: ClassifierLabels
  readonly corpus: ReadonlyArray<LabelledPrompt>
  readonly seeds: ReadonlyArray<LabelledPrompt>
  /** The conversational prompts written for this project, under their own source (in the folds like a corpus source). */
  readonly written: ReadonlyArray<LabelledPrompt>
  readonly digests: { readonly corpus: string; readonly seeds: string; readonly written: string; readonly taxonomy: string }
  readonly settings: TrainerSettings
}

/** A finished training. */
export interface BuildResult {
  readonly model: ClassifierModel
  readonly json: string
  readonly data: PreparedCorpus
  readonly heldOut: ReadonlyArray<Float64Array | null>
  readonly folds: ReadonlyMap<string, number>
}

const countBy = (rows: ReadonlyArray<LabelledPrompt>, key: (row: LabelledPrompt) => string) => {
  const counts = new Map<string, number>()
  for (const row of rows) counts.set(key(row), (counts.get(key(row)) ?? 0) + 1)
  return Object.fromEntries([...counts].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)))
}

const provenance = (input: BuildInput, folds: ReadonlyMap<string, number>, temperature: number) => ({
  corpus: {
    name: "router-train (labelled prompts from public datasets; see data/README.md)",
    prompts_sha256: input.digests.corpus,
    rows_used: input.corpus.length,
    excluded_by: EXCLUSION_RULES.map((rule) => ({ source: rule.source, pattern: String(rule.pattern), reason: rule.reason })),
    rows_by_source: countBy(input.corpus, (row) => row.source)
  },
  seeds: {
    file: "data/router-classifier-seeds.jsonl",
    sha256: input.digests.seeds,
    rows: input.seeds.length,
    origin: "hand-written for this project"
  },
  written: {
    file: "data/router-classifier-written.jsonl",
    sha256: input.digests.written,
    rows: input.written.length,
    rows_by_source: countBy(input.written, (row) => row.source),
    origin: "hand-written for this project: conversational requests in several languages, some with pasted code, logs or HTML"
  },
  language_rule: "multilingual.non_english_assistant rows train as general; at inference P(not English) of the general mass moves to it (src/router/classifier/LanguageRule.ts)",
  taxonomy: { file: "data/task-types.json", sha256: input.digests.taxonomy },
  settings: {
    ...input.settings,
    sample_weights: {
      type_cap: TYPE_CAP,
      hand_written_share: SEED_SHARE,
      hand_written_sources: `${SEED_SOURCE} and every source starting ${WRITTEN_SOURCE_PREFIX}`,
      max_weight: MAX_WEIGHT,
      max_seed_weight: MAX_SEED_WEIGHT
    }
  },
  calibration: {
    temperature: Number(temperature.toPrecision(9)),
    fitted_on: "held-out-source predictions of the by-source cross-validation (family negative log-likelihood)",
    fold_of_source: Object.fromEntries([...folds].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)))
  },
  licences: "data/router-train-LICENSES/ holds the corpus licences; NOTES.md there maps each source to its licence",
  rebuild: "npm run router:train -- --corpus ../shared/data/router-train"
})

/** Trains, calibrates and serializes a classifier. */
export const buildClassifier = (input: BuildInput): BuildResult => {
  const data = prepareCorpus(input.labels, [...input.corpus, ...input.written, ...input.seeds])
  const { folds, logits } = heldOutLogits(data, input.settings)
  const predictions: Array<HeldOutPrediction> = []
  logits.forEach((row, index) => {
    if (row !== null) predictions.push({ logits: row, family: trainingFamily(input.labels, data.rows[index]!) })
  })
  const temperature = fitTemperature(predictions, data.familyOf, input.labels.families.length)
  const model = { ...trainOn(data, data.rows.map((_, index) => index), input.settings), temperature }
  return { model, json: weightsJson(model, provenance(input, folds, temperature)), data, heldOut: logits, folds }
}
