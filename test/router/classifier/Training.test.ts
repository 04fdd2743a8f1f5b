/**
 * The training on a tiny synthetic corpus (no corpus folder needed): two runs give the same weights file byte for
 * byte, the file reads back into a model that learned the corpus, and the pieces behave: folds group by source,
 * sample weights balance the families and treat every written batch as hand-written, written rows too close to an
 * evaluation prompt are left out, the temperature fit recovers a known temperature, quantization stays within half a
 * step, and the metrics count as they should.
 */
import { assert, describe, it } from "@effect/vitest"
import { createHash } from "node:crypto"
import { fitTemperature } from "../../../tools/router/Calibration.js"
import { buildClassifier } from "../../../tools/router/ClassifierBuild.js"
import { softmax } from "../../../src/router/classifier/ClassifierModel.js"
import { evaluate, expectedCalibrationError } from "../../../tools/router/EvalMetrics.js"
import { classifyState } from "../../../src/router/classifier/PromptClassifier.js"
import { isHandWritten, sampleWeights } from "../../../tools/router/SampleWeights.js"
import { seededRandom } from "../../../tools/router/SeededRandom.js"
import { sourceFolds } from "../../../tools/router/SourceFolds.js"
import { TAXONOMY_PATH } from "../../../tools/router/TrainArguments.js"
import { type LabelledPrompt, readLabels } from "../../../tools/router/TrainingCorpus.js"
import { DEFAULT_SETTINGS, type TrainerSettings } from "../../../tools/router/TrainingPipeline.js"
import { parseWeights } from "../../../src/router/classifier/WeightsFile.js"
import { quantize } from "../../../tools/router/WeightsWriter.js"
import { jaccard, OVERLAP_LIMIT, overlapTokens, withoutOverlaps } from "../../../tools/router/WrittenOverlap.js"

const labels = readLabels(TAXONOMY_PATH)

const TOPICS = ["the sea", "autumn", "a lost key", "the city at night", "my grandmother", "a red fox", "winter rain", "an old train"]

const row = (text: string, taskType: string, source: string): LabelledPrompt => ({
  text,
  family: taskType.slice(0, taskType.indexOf(".")),
  taskType,
  difficulty: null,
  source
})

/** A small corpus: four task types, two sources each, prompts from fixed templates. */
const syntheticCorpus = (): Array<LabelledPrompt> =>
  TOPICS.flatMap((topic, index) => [
    row(`Write a poem about ${topic}.`, "writing.creative", "poems_a"),
    row(`Compose a short story about ${topic}, please`, "writing.creative", "poems_b"),
    row(`What is ${index + 12} plus ${index * 7 + 3}?`, "math.applied_quantitative", "sums_a"),
    row(`Compute ${index + 4} times ${index + 9} for me`, "math.applied_quantitative", "sums_b"),
    row(`Write a Python function that sorts ${topic} records by date`, "coding.code_generation", "code_a"),
    row(`Implement a JavaScript function returning ${topic} entries`, "coding.code_generation", "code_b"),
    row(`Translate into French: I love ${topic}.`, "multilingual.translation", "translate_a"),
    row(`Please translate to Spanish: ${topic} is beautiful`, "multilingual.translation", "translate_b")
  ])

const settings: TrainerSettings = {
  vocabulary: { minRows: 1, minSources: 1 },
  softmax: { ...DEFAULT_SETTINGS.softmax, epochs: 4 },
  maxFeatures: 3000
}

const build = () =>
  buildClassifier({
    labels,
    corpus: syntheticCorpus(),
    seeds: [{ ...row("write me a little poem about spring", "writing.creative", "seed") }],
    written: [{ ...row("how do I deal with stress at work", "general.chat_assistant", "written_chat") }],
    digests: { corpus: "corpus-digest", seeds: "seed-digest", written: "written-digest", taxonomy: "taxonomy-digest" },
    settings
  })

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

describe("training is reproducible", () => {
  it("two trainings on the same corpus write the same bytes, and the file reads back into a working model", () => {
    const first = build()
    const second = build()
    assert.strictEqual(sha256(first.json), sha256(second.json))
    assert.strictEqual(first.json, second.json)
    const model = parseWeights(first.json, "synthetic")
    assert.isAbove(model.temperature, 0)
    const top = (text: string) => [...classifyState(model, text).taskTypes].reduce((a, b) => (b[1] > a[1] ? b : a))[0]
    assert.strictEqual(top("Write a poem about the mountains."), "writing.creative")
    assert.strictEqual(top("Translate into French: the mountains are high"), "multilingual.translation")
    assert.strictEqual(top("What is 40 plus 2?"), "math.applied_quantitative")
    const provenance = JSON.parse(first.json).provenance
    assert.strictEqual(provenance.corpus.prompts_sha256, "corpus-digest")
    assert.strictEqual(provenance.seeds.rows, 1)
  })
})

describe("training pieces", () => {
  it("folds put every source in exactly one fold, deterministically, the seeds in none", () => {
    const rows = [...syntheticCorpus(), row("a seed", "writing.creative", "seed")]
    const folds = sourceFolds(rows)
    const sources = [...new Set(rows.map((item) => item.source))].filter((source) => source !== "seed").sort()
    assert.deepStrictEqual([...folds.keys()].sort(), sources)
    assert.deepStrictEqual(new Map([...sourceFolds([...rows].reverse())].sort()), new Map([...folds].sort()))
    for (const fold of folds.values()) assert.isTrue(fold >= 0 && fold < 5)
    for (const type of ["writing.creative", "math.applied_quantitative", "coding.code_generation", "multilingual.translation"]) {
      const of = [...new Set(rows.filter((item) => item.taskType === type && item.source !== "seed").map((item) => folds.get(item.source)))]
      assert.strictEqual(of.length, 2, `the two sources of ${type} are in different folds`)
    }
  })

  it("sample weights average 1 and give every family the same total", () => {
    const rows = [
      ...Array.from({ length: 300 }, () => row("a", "coding.code_generation", "big")),
      ...Array.from({ length: 20 }, () => row("b", "coding.debugging", "small")),
      ...Array.from({ length: 40 }, () => row("c", "math.competition", "other"))
    ]
    const weights = sampleWeights(rows)
    assert.closeTo(weights.reduce((sum, value) => sum + value, 0) / weights.length, 1, 1e-9)
    const total = (family: string) => rows.reduce((sum, item, index) => sum + (item.family === family ? weights[index]! : 0), 0)
    assert.closeTo(total("coding"), total("math"), 1e-6)
  })

  it("every written_chat batch and the seeds are hand-written, and share a type's hand-written weight by size", () => {
    assert.isTrue(isHandWritten("seed") && isHandWritten("written_chat") && isHandWritten("written_chat_5"))
    assert.isFalse(isHandWritten("gsm8k") || isHandWritten("chat_written"))
    const rows = [
      ...Array.from({ length: 100 }, () => row("a", "general.chat_assistant", "corpus")),
      ...Array.from({ length: 9 }, () => row("b", "general.chat_assistant", "written_chat")),
      ...Array.from({ length: 9 }, () => row("c", "general.chat_assistant", "written_chat_9"))
    ]
    const weights = sampleWeights(rows)
    const total = (source: string) => rows.reduce((sum, item, index) => sum + (item.source === source ? weights[index]! : 0), 0)
    assert.closeTo(total("written_chat") / total("corpus"), 0.4 / 0.2, 1e-9)
    assert.closeTo(total("written_chat_9"), total("written_chat"), 1e-9)
  })

  it("a written row overlapping an evaluation prompt at the limit or above is left out, by words or character pairs", () => {
    assert.strictEqual(jaccard(overlapTokens("Who was the first woman"), overlapTokens("who was THE first woman to win")), 5 / 7)
    assert.deepStrictEqual([...overlapTokens("周末在家")], ["周末", "末在", "在家"])
    const written = [
      row("how do I deal with stress at work", "general.chat_assistant", "written_chat"),
      row("ways to relax after a long day at work", "general.chat_assistant", "written_chat"),
      row("周末在家可以做什么", "general.chat_assistant", "written_chat_2"),
      row("write a haiku about rain", "writing.creative", "written_chat")
    ]
    const split = withoutOverlaps(written, ["how do I deal with stress at work?", "周末在家可以做些什么"])
    assert.deepStrictEqual(split.leftOut.map((item) => item.text), [written[0]!.text, written[2]!.text])
    assert.deepStrictEqual(split.kept.map((item) => item.text), [written[1]!.text, written[3]!.text])
    assert.isAtLeast(jaccard(overlapTokens(written[1]!.text), overlapTokens("ways to relax after a long day at home")), OVERLAP_LIMIT)
  })

  it("the temperature fit recovers the temperature the labels were drawn at", () => {
    const random = seededRandom(7)
    const familyOf = Int32Array.from([0, 1, 2])
    const predictions = Array.from({ length: 4000 }, () => {
      const logits = Float64Array.from([random.next() * 6, random.next() * 6, random.next() * 6])
      const p = softmax(logits, 2)
      const draw = random.next()
      const family = draw < p[0]! ? 0 : draw < p[0]! + p[1]! ? 1 : 2
      return { logits, family }
    })
    assert.closeTo(fitTemperature(predictions, familyOf, 3), 2, 0.25)
  })

  it("int8 quantization keeps every weight within half a step of its row's scale", () => {
    const weights = Float32Array.from([0.5, -1.25, 0.01, 3, 0, 0, 0, 0])
    const { scales, values } = quantize(weights, 4)
    for (let index = 0; index < weights.length; index++) {
      const scale = scales[Math.floor(index / 4)]!
      assert.isAtMost(Math.abs(values[index]! * scale - weights[index]!), scale / 2 + 1e-7)
    }
    assert.strictEqual(scales[1], 0)
  })

  it("metrics: accuracy, top-5, confusion and calibration error count as defined", () => {
    const familyOf = Int32Array.from([0, 0, 1])
    const report = evaluate([
      { types: Float64Array.from([0.7, 0.2, 0.1]), family: 0, taskType: 0 },
      { types: Float64Array.from([0.1, 0.3, 0.6]), family: 0, taskType: 1 },
      { types: Float64Array.from([0.2, 0.1, 0.7]), family: 1, taskType: -1 }
    ], familyOf, 2)
    assert.closeTo(report.familyAccuracy, 2 / 3, 1e-12)
    assert.closeTo(report.top1, 1 / 2, 1e-12)
    assert.closeTo(report.top5, 1, 1e-12)
    assert.deepStrictEqual(report.confusion, [[1, 1], [0, 1]])
    assert.closeTo(expectedCalibrationError([[0.95, true], [0.95, false]]), 0.45, 1e-12)
  })
})
