/**
 * The hand-written sets the training never reads, classified by the shipped weights exactly as the service
 * classifies (through the router's excerpt): the sanity set (`data/router-classifier-sanity.jsonl`, short everyday
 * prompts) and the held-out set (`data/router-classifier-holdout.jsonl`, requests written as real users write them,
 * English and Japanese, some long with pasted code or logs). Each reports family accuracy and task-type top-1, per
 * family and per language, and the prompts it got wrong.
 */
import type { ClassifierLabels } from "../../src/router/classifier/ClassifierModel.js"
import { classifyState } from "../../src/router/classifier/PromptClassifier.js"
import { promptTextOfTask } from "../../src/router/classifier/PromptText.js"
import { readWeights } from "../../src/router/classifier/WeightsFile.js"
import { promptExcerpt } from "../../src/router/classification/PromptExcerpt.js"
import { groupTable } from "./EvalReport.js"
import { SANITY_PATH } from "./TrainArguments.js"
import { readRows } from "./TrainingCorpus.js"

const top = (probabilities: ReadonlyMap<string, number>): readonly [string, number] =>
  [...probabilities].reduce((best, item) => (item[1] > best[1] ? item : best))

const count = (groups: Map<string, [number, number]>, key: string, right: boolean) => {
  const counts = groups.get(key) ?? [0, 0]
  counts[1] += 1
  if (right) counts[0] += 1
  groups.set(key, counts)
}

/** The results of the shipped weights on a hand-written set, as text, with its misses when `withMisses`. */
export const sanityResults = (weightsPath: string, labels: ClassifierLabels, path = SANITY_PATH, withMisses = true): string => {
  const model = readWeights(weightsPath)
  const rows = readRows(path, labels, "sanity").rows
  const byFamily = new Map<string, [number, number]>(labels.families.map((family) => [family, [0, 0]]))
  const byLanguage = new Map<string, [number, number]>()
  const missed: Array<string> = []
  let familyRight = 0
  let typeRight = 0
  for (const row of rows) {
    const result = classifyState(model, promptExcerpt(row.text))
    const [family, probability] = top(result.families)
    const [taskType] = top(result.taskTypes)
    count(byFamily, row.family, family === row.family)
    count(byLanguage, row.lang ?? "?", family === row.family)
    if (family === row.family) familyRight++
    else {
      const text = promptTextOfTask(row.text).text.replace(/\s+/g, " ").slice(0, 80)
      missed.push(`  ${row.family} -> ${family} (${probability.toFixed(2)}, ${taskType}): ${text}`)
    }
    if (taskType === row.taskType) typeRight++
  }
  const perFamily = new Map([...byFamily].filter(([, counts]) => counts[1] > 0))
  return [
    `family accuracy ${familyRight}/${rows.length} (${((100 * familyRight) / rows.length).toFixed(1)}%), ` +
      `task type top-1 ${typeRight}/${rows.length} (${((100 * typeRight) / rows.length).toFixed(1)}%)`,
    groupTable("family", perFamily),
    ...(byLanguage.size > 1 ? [groupTable("language", byLanguage)] : []),
    ...(missed.length === 0 || !withMisses ? [] : ["missed:", ...missed])
  ].join("\n")
}
