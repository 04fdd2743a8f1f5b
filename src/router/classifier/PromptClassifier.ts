/**
 * The embedded prompt classifier: in-process, no network, no native code. It reads a classification state (the
 * router's prompt excerpt), computes the features once, and gives the calibrated task-type distribution (the
 * language rule applied, `LanguageRule.ts`, then a floor of FLOOR spread evenly, so every type stays reachable),
 * the family distribution (its sums), P(easy, medium, hard) and the router's five difficulty levels, and the facet
 * probabilities.
 */
import { type ClassifierModel, softmax, typeLogits } from "./ClassifierModel.js"
import { difficultyDistribution, difficultyLevels, mixedPrior } from "./DifficultyModel.js"
import { difficultySignals } from "./DifficultySignals.js"
import { facetProbabilities, type FacetProbabilities } from "./FacetRules.js"
import { applyLanguageRule } from "./LanguageRule.js"
import { promptTextOfState } from "./PromptText.js"
import { promptFeatures } from "./TextFeatures.js"

/** Probability mass spread evenly over every task type. */
export const FLOOR = 0.002

/** What the classifier says about one prompt. */
export interface PromptClassification {
  /** P(type), in the model's label order (the taxonomy file's), summing to 1. */
  readonly taskTypes: ReadonlyMap<string, number>
  /** P(family), in the taxonomy's family order, summing to 1. */
  readonly families: ReadonlyMap<string, number>
  /** P(easy), P(medium), P(hard). */
  readonly difficulty: readonly [number, number, number]
  /** P(trivial), P(easy), P(moderate), P(hard), P(expert): the router's difficulty levels. */
  readonly levels: ReadonlyArray<number>
  readonly facets: FacetProbabilities
}

/** Classifies a classification state (a prompt excerpt as the router sends it). */
export const classifyState = (model: ClassifierModel, state: string): PromptClassification => {
  const prompt = promptTextOfState(state)
  const features = promptFeatures(prompt)
  const raw = applyLanguageRule(model.labels, softmax(typeLogits(model, features), model.temperature), features.language.nonEnglish)
  const count = raw.length
  const probabilities = raw.map((p) => (1 - FLOOR) * p + FLOOR / count)
  const types = model.labels.taskTypes.map((type) => type.id)
  const families = new Map(model.labels.families.map((family) => [family, 0]))
  model.labels.taskTypes.forEach((type, k) => families.set(type.family, families.get(type.family)! + probabilities[k]!))
  const difficulty = difficultyDistribution(
    model.difficulty,
    mixedPrior(types, probabilities),
    difficultySignals(features, prompt.totalChars)
  )
  return {
    taskTypes: new Map(types.map((id, k) => [id, probabilities[k]!])),
    families,
    difficulty: [difficulty[0]!, difficulty[1]!, difficulty[2]!],
    levels: difficultyLevels(difficulty, prompt.totalChars),
    facets: facetProbabilities(features, {
      taskTypes: types,
      probabilities,
      familyProbability: (family) => families.get(family) ?? 0,
      totalChars: prompt.totalChars
    })
  }
}
