/**
 * `npm run router:eval -- [--corpus PATH] [--weights FILE]`: the classifier's quality on sources it never saw.
 * The corpus is split by `source` into the folds of `SourceFolds.ts`; each fold is predicted by a model trained,
 * exactly as `router:train` trains, on the other folds (plus the seeds), with a temperature fitted on the other
 * folds' held-out predictions. It prints the figures over all folds, then over the rows whose task type the fold's
 * training still knew from another corpus source (a type with one source disappears with it), the family
 * confusion matrix and per-type quality, the difficulty accuracy on rows with a difficulty label, then the shipped
 * weights' results on the hand-written sanity set (never trained on) and their timings (load, 4 KB p50/p99).
 */
import { resolve } from "node:path"
import { fitTemperature, type HeldOutPrediction } from "./Calibration.js"
import { fourKilobytePrompts, timeClassifier } from "./ClassifierTiming.js"
import { softmax } from "../../src/router/classifier/ClassifierModel.js"
import { usableRows } from "./CorpusRules.js"
import { difficultyDistribution, mixedPrior } from "../../src/router/classifier/DifficultyModel.js"
import { evaluate, type ScoredPrediction } from "./EvalMetrics.js"
import { confusionTable, headline, reliabilityTable, typeTable } from "./EvalReport.js"
import { sanityResults } from "./SanitySet.js"
import { readLabels, readRows } from "./TrainingCorpus.js"
import { heldOutLogits, prepareCorpus, DEFAULT_SETTINGS, type PreparedCorpus } from "./TrainingPipeline.js"
import { argument, corpusFile, DEFAULT_CORPUS, SEEDS_PATH, TAXONOMY_PATH } from "./TrainArguments.js"
import { DEFAULT_WEIGHTS_PATH } from "../../src/router/classifier/WeightsFile.js"

const print = (text: string) => process.stdout.write(`${text}\n`)

/** Each fold's temperature, fitted on the held-out predictions of the other folds. */
const foldTemperatures = (data: PreparedCorpus, logits: ReadonlyArray<Float64Array | null>, folds: ReadonlyMap<string, number>) => {
  const count = Math.max(0, ...folds.values()) + 1
  return Array.from({ length: count }, (_, fold) => {
    const others: Array<HeldOutPrediction> = []
    logits.forEach((row, index) => {
      const source = data.rows[index]!.source
      if (row !== null && folds.get(source) !== fold) others.push({ logits: row, family: data.labels.families.indexOf(data.rows[index]!.family) })
    })
    return fitTemperature(others, data.familyOf, data.labels.families.length)
  })
}

/** Per fold, the task types (or families, for rows without a type) its training knew from corpus rows. */
const knownTypes = (data: PreparedCorpus, folds: ReadonlyMap<string, number>, count: number): Array<Set<string>> =>
  Array.from({ length: count }, (_, fold) =>
    new Set(data.rows.flatMap((row) => (row.source !== "seed" && folds.get(row.source) !== fold ? [row.taskType ?? row.family] : []))))

const DIFFICULTY_INDEX: ReadonlyMap<string, number> = new Map([["easy", 0], ["medium", 1], ["hard", 2]])

const main = () => {
  const args = process.argv.slice(2)
  const corpus = resolve(argument(args, "corpus", DEFAULT_CORPUS))
  const weights = resolve(argument(args, "weights", DEFAULT_WEIGHTS_PATH))
  const labels = readLabels(TAXONOMY_PATH)
  const rows = usableRows(readRows(corpusFile(corpus), labels).rows)
  const seeds = readRows(SEEDS_PATH, labels, "seed").rows
  const started = performance.now()
  const data = prepareCorpus(labels, [...rows, ...seeds])
  const { folds, logits, models } = heldOutLogits(data, DEFAULT_SETTINGS)
  const temperatures = foldTemperatures(data, logits, folds)
  const known = knownTypes(data, folds, temperatures.length)
  const predictions: Array<ScoredPrediction> = []
  const knownPredictions: Array<ScoredPrediction> = []
  let difficultyRight = 0
  let difficultyRows = 0
  logits.forEach((row, index) => {
    if (row === null) return
    const labelled = data.rows[index]!
    const fold = folds.get(labelled.source)!
    const types = softmax(row, temperatures[fold]!)
    const prediction = { types, family: labels.families.indexOf(labelled.family), taskType: Math.max(-1, data.targets[index]!) }
    predictions.push(prediction)
    if (known[fold]!.has(labelled.taskType ?? labelled.family)) knownPredictions.push(prediction)
    if (labelled.difficulty === null) return
    const prior = mixedPrior(labels.taskTypes.map((type) => type.id), types)
    const p = difficultyDistribution(models[fold]!.difficulty, prior, data.encoded.rows[index]!.difficulty)
    const guess = p[0]! >= p[1]! && p[0]! >= p[2]! ? 0 : p[1]! >= p[2]! ? 1 : 2
    difficultyRows++
    if (guess === DIFFICULTY_INDEX.get(labelled.difficulty)) difficultyRight++
  })
  const report = evaluate(predictions, data.familyOf, labels.families.length)
  const sources = [...folds].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1))
  print(`# Held-out-source evaluation (${folds.size} sources in ${temperatures.length} folds, ${((performance.now() - started) / 1000).toFixed(0)} s)`)
  for (let fold = 0; fold < temperatures.length; fold++) {
    print(`fold ${fold} (temperature ${temperatures[fold]!.toFixed(3)}): ${sources.filter(([, f]) => f === fold).map(([name]) => name).join(", ")}`)
  }
  print(`\n## All held-out rows\n${headline(report)}`)
  print(`\n## Held-out rows whose task type the fold's training knew from another source\n${headline(evaluate(knownPredictions, data.familyOf, labels.families.length))}`)
  print(`difficulty accuracy on the ${difficultyRows} held-out rows with a difficulty label: ${((100 * difficultyRight) / Math.max(1, difficultyRows)).toFixed(1)}%`)
  print(`\n## Calibration (all held-out rows)\n${reliabilityTable(report)}`)
  print(`\n## Family confusion matrix\n${confusionTable(report, labels)}`)
  print(`\n## Task types\n${typeTable(report, labels)}`)
  const sanity = sanityResults(weights, labels)
  print(`\n## Hand-written sanity set (shipped weights, never trained on)\n${sanity}`)
  const times = timeClassifier(weights, fourKilobytePrompts(rows.map((row) => row.text), 200))
  print(
    `\n## Timing (shipped weights)\nload ${times.loadMs.toFixed(1)} ms; classify a 4 KB prompt: ` +
      `p50 ${times.p50Ms.toFixed(3)} ms, p99 ${times.p99Ms.toFixed(3)} ms (${times.prompts} prompts x 5)`
  )
}

main()
