/**
 * The hand-written sanity set (`data/router-classifier-sanity.jsonl`): realistic user requests written for this
 * project across the nine families, kept out of training, as a stand-in for real users' prompts. Its results are
 * the shipped weights' family and task-type accuracy, per family, and the prompts whose family was missed.
 */
import type { ClassifierLabels } from "../../src/router/classifier/ClassifierModel.js"
import { classifyState } from "../../src/router/classifier/PromptClassifier.js"
import { promptTextOfTask } from "../../src/router/classifier/PromptText.js"
import { SANITY_PATH } from "./TrainArguments.js"
import { readRows } from "./TrainingCorpus.js"
import { readWeights } from "../../src/router/classifier/WeightsFile.js"
import { promptExcerpt } from "../../src/router/classification/PromptExcerpt.js"

const top = (probabilities: ReadonlyMap<string, number>): [string, number] =>
  [...probabilities].reduce((best, item) => (item[1] > best[1] ? item : best))

/** The sanity set's results for a weights file, as text. */
export const sanityResults = (weightsPath: string, labels: ClassifierLabels, path = SANITY_PATH): string => {
  const model = readWeights(weightsPath)
  const rows = readRows(path, labels, "sanity").rows
  const byFamily = new Map(labels.families.map((family) => [family, [0, 0]]))
  const missed: Array<string> = []
  let familyRight = 0
  let typeRight = 0
  for (const row of rows) {
    const result = classifyState(model, promptExcerpt(row.text))
    const [family, probability] = top(result.families)
    const [taskType] = top(result.taskTypes)
    const counts = byFamily.get(row.family)!
    counts[1]! += 1
    if (family === row.family) {
      familyRight++
      counts[0]! += 1
    } else {
      const text = promptTextOfTask(row.text).text.replace(/\s+/g, " ").slice(0, 80)
      missed.push(`  ${row.family} -> ${family} (${probability.toFixed(2)}, ${taskType}): ${text}`)
    }
    if (taskType === row.taskType) typeRight++
  }
  const perFamily = [...byFamily].map(([family, [right, total]]) => `${family} ${right}/${total}`).join(", ")
  return [
    `family accuracy ${familyRight}/${rows.length} (${((100 * familyRight) / rows.length).toFixed(1)}%), ` +
      `task type top-1 ${typeRight}/${rows.length} (${((100 * typeRight) / rows.length).toFixed(1)}%)`,
    `per family: ${perFamily}`,
    ...(missed.length === 0 ? [] : ["missed:", ...missed])
  ].join("\n")
}
