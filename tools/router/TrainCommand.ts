/**
 * `npm run router:train -- --corpus PATH [--out FILE]`: rebuilds `data/router-classifier.json` from the corpus
 * (default `../shared/data/router-train`, a folder holding `prompts.jsonl` and `LICENSES/`) and the shipped seeds,
 * and copies the corpus's licence texts (and its README, as CORPUS-README.md) to `data/router-train-LICENSES/`, so
 * the weights travel with their licences and provenance. Running it twice on the same corpus writes the same
 * bytes. Written rows too close to an evaluation prompt are left out (`WrittenOverlap.ts`). The service itself never
 * reads the corpus.
 */
import { createHash } from "node:crypto"
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { buildClassifier } from "./ClassifierBuild.js"
import { usableRows } from "./CorpusRules.js"
import { argument, corpusFile, DEFAULT_CORPUS, EVALUATION_PATHS, LICENCES_DIR, SEEDS_PATH, TAXONOMY_PATH, WRITTEN_PATH } from "./TrainArguments.js"
import { readLabels, readRows } from "./TrainingCorpus.js"
import { DEFAULT_SETTINGS } from "./TrainingPipeline.js"
import { evaluationTexts, withoutOverlaps } from "./WrittenOverlap.js"
import { DEFAULT_WEIGHTS_PATH } from "../../src/router/classifier/WeightsFile.js"

/** Copies the corpus's licence texts, and its README (the provenance they refer to) as CORPUS-README.md. */
const copyLicences = (corpus: string): number => {
  const folder = statSync(corpus).isDirectory() ? corpus : resolve(corpus, "..")
  const from = join(folder, "LICENSES")
  if (!existsSync(from)) return 0
  mkdirSync(LICENCES_DIR, { recursive: true })
  const files = readdirSync(from).sort()
  for (const file of files) copyFileSync(join(from, file), join(LICENCES_DIR, file))
  if (existsSync(join(folder, "README.md"))) copyFileSync(join(folder, "README.md"), join(LICENCES_DIR, "CORPUS-README.md"))
  return files.length
}

const main = () => {
  const args = process.argv.slice(2)
  const corpus = resolve(argument(args, "corpus", DEFAULT_CORPUS))
  const out = resolve(argument(args, "out", DEFAULT_WEIGHTS_PATH))
  const started = performance.now()
  const labels = readLabels(TAXONOMY_PATH)
  const rows = readRows(corpusFile(corpus), labels)
  const seeds = readRows(SEEDS_PATH, labels, "seed")
  const written = readRows(WRITTEN_PATH, labels)
  const trainable = withoutOverlaps(written.rows, evaluationTexts(EVALUATION_PATHS))
  const result = buildClassifier({
    labels,
    corpus: usableRows(rows.rows),
    seeds: seeds.rows,
    written: trainable.kept,
    digests: {
      corpus: rows.sha256,
      seeds: seeds.sha256,
      written: written.sha256,
      taxonomy: createHash("sha256").update(readFileSync(TAXONOMY_PATH)).digest("hex")
    },
    settings: DEFAULT_SETTINGS
  })
  writeFileSync(out, result.json)
  const licences = copyLicences(corpus)
  const seconds = ((performance.now() - started) / 1000).toFixed(1)
  process.stdout.write(
    `trained on ${usableRows(rows.rows).length} of ${rows.rows.length} corpus rows, ${trainable.kept.length} written rows ` +
      `(${trainable.leftOut.length} left out for overlapping an evaluation prompt) and ` +
      `${seeds.rows.length} seeds in ${seconds} s: ` +
      `${result.model.featureRows.size} features, temperature ${result.model.temperature.toFixed(3)}\n` +
      `wrote ${out} (sha256 ${createHash("sha256").update(result.json).digest("hex")}); ` +
      `${licences} licence files in ${LICENCES_DIR}\n`
  )
}

main()
