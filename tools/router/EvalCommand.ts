/**
 * `npm run router:eval -- [--corpus PATH] [--weights FILE]`: the classifier's quality on sources it never saw.
 * The corpus and the written prompts are split by `source` into the folds of `SourceFolds.ts`; each fold is
 * predicted by a model trained, exactly as `router:train` trains (written rows too close to an evaluation prompt
 * left out), on the other folds (plus the seeds), with a temperature fitted on the other folds' held-out
 * predictions, and the language rule (`LanguageRule.ts`) applied as at inference, so the figures are against the
 * rows' own labels. It prints the figures over all folds, then over the rows whose task type the fold's training
 * still knew from another source (a type with one source disappears with it), accuracy per family and per source,
 * the family confusion matrix and per-type quality, the difficulty accuracy on rows with a difficulty label, then
 * the shipped weights' results on the nine hand-written held-out sets and the sanity set (never trained on) and
 * their timings (load, 4 KB p50/p99).
 */
import { resolve } from "node:path"
import { softmax } from "../../src/router/classifier/ClassifierModel.js"
import { difficultyDistribution, mixedPrior } from "../../src/router/classifier/DifficultyModel.js"
import { applyLanguageRule } from "../../src/router/classifier/LanguageRule.js"
import { DEFAULT_WEIGHTS_PATH } from "../../src/router/classifier/WeightsFile.js"
import { fitTemperature, type HeldOutPrediction } from "./Calibration.js"
import { fourKilobytePrompts, timeClassifier } from "./ClassifierTiming.js"
import { usableRows } from "./CorpusRules.js"
import { evaluate, type ScoredPrediction } from "./EvalMetrics.js"
import { confusionTable, familyTable, groupTable, headline, reliabilityTable, typeTable } from "./EvalReport.js"
import { sanityResults } from "./SanitySet.js"
import {
  argument,
  corpusFile,
  DEFAULT_CORPUS,
  EVALUATION_PATHS,
  EVALUATION_SETS,
  SEEDS_PATH,
  TAXONOMY_PATH,
  WRITTEN_PATH
} from "./TrainArguments.js"
import { readLabels, readRows } from "./TrainingCorpus.js"
import { evaluationTexts, withoutOverlaps } from "./WrittenOverlap.js"
import { DEFAULT_SETTINGS, heldOutLogits, prepareCorpus, type PreparedCorpus, trainingFamily } from "./TrainingPipeline.js"

const print = (text: string) => process.stdout.write(`${text}\n`)

/** Each fold's temperature, fitted on the held-out predictions of the other folds. */
const foldTemperatures = (data: PreparedCorpus, logits: ReadonlyArray<Float64Array | null>, folds: ReadonlyMap<string, number>) => {
  const count = Math.max(0, ...folds.values()) + 1
  return Array.from({ length: count }, (_, fold) => {
    const others: Array<HeldOutPrediction> = []
    logits.forEach((row, index) => {
      const source = data.rows[index]!.source
      if (row !== null && folds.get(source) !== fold) others.push({ logits: row, family: trainingFamily(data.labels, data.rows[index]!) })
    })
    return fitTemperature(others, data.familyOf, data.labels.families.length)
  })
}

/** Per fold, the task types (or families, for rows without a type) its training knew from corpus rows. */
const knownTypes = (data: PreparedCorpus, folds: ReadonlyMap<string, number>, count: number): Array<Set<string>> =>
  Array.from({ length: count }, (_, fold) =>
    new Set(data.rows.flatMap((row) => (row.source !== "seed" && folds.get(row.source) !== fold ? [row.taskType ?? row.family] : []))))

const DIFFICULTY_INDEX: ReadonlyMap<string, number> = new Map([["easy", 0], ["medium", 1], ["hard", 2]])

/** The held-out predictions of every fold, with the difficulty accuracy and the family accuracy per source. */
const heldOutPredictions = (data: PreparedCorpus) => {
  const { folds, logits, models } = heldOutLogits(data, DEFAULT_SETTINGS)
  const temperatures = foldTemperatures(data, logits, folds)
  const known = knownTypes(data, folds, temperatures.length)
  const labels = data.labels
  const all: Array<ScoredPrediction> = []
  const knownOnly: Array<ScoredPrediction> = []
  const bySource = new Map<string, [number, number]>()
  const difficulty: [number, number] = [0, 0]
  logits.forEach((row, index) => {
    if (row === null) return
    const labelled = data.rows[index]!
    const fold = folds.get(labelled.source)!
    const types = applyLanguageRule(labels, softmax(row, temperatures[fold]!), data.encoded.rows[index]!.nonEnglish)
    const prediction = { types, family: labels.families.indexOf(labelled.family), taskType: Math.max(-1, labels.taskTypes.findIndex((type) => type.id === labelled.taskType)) }
    all.push(prediction)
    if (known[fold]!.has(labelled.taskType ?? labelled.family)) knownOnly.push(prediction)
    const counts = bySource.get(labelled.source) ?? [0, 0]
    counts[1] += 1
    if (evaluate([prediction], data.familyOf, labels.families.length).familyAccuracy === 1) counts[0] += 1
    bySource.set(labelled.source, counts)
    if (labelled.difficulty === null) return
    const p = difficultyDistribution(models[fold]!.difficulty, mixedPrior(labels.taskTypes.map((type) => type.id), types), data.encoded.rows[index]!.difficulty)
    const guess = p[0]! >= p[1]! && p[0]! >= p[2]! ? 0 : p[1]! >= p[2]! ? 1 : 2
    difficulty[1] += 1
    if (guess === DIFFICULTY_INDEX.get(labelled.difficulty)) difficulty[0] += 1
  })
  return { folds, temperatures, all, knownOnly, bySource, difficulty }
}

const main = () => {
  const args = process.argv.slice(2)
  const corpus = resolve(argument(args, "corpus", DEFAULT_CORPUS))
  const weights = resolve(argument(args, "weights", DEFAULT_WEIGHTS_PATH))
  const labels = readLabels(TAXONOMY_PATH)
  const rows = usableRows(readRows(corpusFile(corpus), labels).rows)
  const written = withoutOverlaps(readRows(WRITTEN_PATH, labels).rows, evaluationTexts(EVALUATION_PATHS)).kept
  const seeds = readRows(SEEDS_PATH, labels, "seed").rows
  const started = performance.now()
  const data = prepareCorpus(labels, [...rows, ...written, ...seeds])
  const { all, bySource, difficulty, folds, knownOnly, temperatures } = heldOutPredictions(data)
  const report = evaluate(all, data.familyOf, labels.families.length)
  const sources = [...folds].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1))
  print(`# Held-out-source evaluation (${folds.size} sources in ${temperatures.length} folds, ${((performance.now() - started) / 1000).toFixed(0)} s)`)
  for (let fold = 0; fold < temperatures.length; fold++) {
    print(`fold ${fold} (temperature ${temperatures[fold]!.toFixed(3)}): ${sources.filter(([, f]) => f === fold).map(([name]) => name).join(", ")}`)
  }
  print(`\n## All held-out rows\n${headline(report)}`)
  print(`\n## Held-out rows whose task type the fold's training knew from another source\n${headline(evaluate(knownOnly, data.familyOf, labels.families.length))}`)
  print(`difficulty accuracy on the ${difficulty[1]} held-out rows with a difficulty label: ${((100 * difficulty[0]!) / Math.max(1, difficulty[1]!)).toFixed(1)}%`)
  print(`\n## Per family (all held-out rows)\n${familyTable(report, labels)}`)
  print(`\n## Per source (family accuracy, each source held out)\n${groupTable("source", bySource)}`)
  print(`\n## Calibration (all held-out rows)\n${reliabilityTable(report)}`)
  print(`\n## Family confusion matrix\n${confusionTable(report, labels)}`)
  print(`\n## Task types\n${typeTable(report, labels)}`)
  for (const set of EVALUATION_SETS) {
    print(`\n## ${set.title}, shipped weights\n${sanityResults(weights, labels, set.path, !set.blind)}`)
  }
  const times = timeClassifier(weights, fourKilobytePrompts(rows.map((row) => row.text), 200))
  print(
    `\n## Timing (shipped weights)\nload ${times.loadMs.toFixed(1)} ms; classify a 4 KB prompt: ` +
      `p50 ${times.p50Ms.toFixed(3)} ms, p99 ${times.p99Ms.toFixed(3)} ms (${times.prompts} prompts x 5)`
  )
}

main()
