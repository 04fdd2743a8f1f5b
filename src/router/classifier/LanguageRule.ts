/**
 * The language rule (decisions.md, Router): a prompt's family and type are its task in any language, and only
 * translation and general requests in another language are `multilingual`. The model learns tasks without regard
 * to language: it is trained with every `multilingual.non_english_assistant` row as a `general` row, so a Japanese
 * maths problem and an English one teach the same thing. The rule is then applied to its output: the share
 * P(not English) of the general family's mass (the detector's `nonEnglish`, `LanguageSignals.ts`) moves to
 * `multilingual.non_english_assistant`, and the general types keep the rest. A taxonomy without those labels is
 * left as it is.
 */
import type { ClassifierLabels } from "./ClassifierModel.js"

/** The family whose requests, in another language, are `NON_ENGLISH_GENERAL_TYPE`. */
export const GENERAL_FAMILY = "general"

/** The task type of a general request in another language. */
export const NON_ENGLISH_GENERAL_TYPE = "multilingual.non_english_assistant"

/** Where the rule moves mass, by label index; null when the labels lack the family or the type. */
interface RuleIndices {
  readonly general: ReadonlyArray<number>
  readonly target: number
}

const indices = new WeakMap<ClassifierLabels, RuleIndices | null>()

const ruleIndices = (labels: ClassifierLabels): RuleIndices | null => {
  if (indices.has(labels)) return indices.get(labels)!
  const general = labels.taskTypes.flatMap((type, k) => (type.family === GENERAL_FAMILY ? [k] : []))
  const target = labels.taskTypes.findIndex((type) => type.id === NON_ENGLISH_GENERAL_TYPE)
  const found = general.length > 0 && target >= 0 ? { general, target } : null
  indices.set(labels, found)
  return found
}

/** The label a row is trained with: a general request in another language is a general request. */
export const trainingLabel = (row: { readonly family: string; readonly taskType: string | null }) =>
  row.taskType === NON_ENGLISH_GENERAL_TYPE ? { family: GENERAL_FAMILY, taskType: null } : { family: row.family, taskType: row.taskType }

/**
 * Applies the rule to a task-type distribution (in the labels' order), in place: the general mass G (the general
 * types' and the target's own) becomes `G x nonEnglish` on the target and `(1 - nonEnglish)` times each general
 * type's share. The total is unchanged.
 */
export const applyLanguageRule = (labels: ClassifierLabels, probabilities: Float64Array, nonEnglish: number): Float64Array => {
  const rule = ruleIndices(labels)
  if (rule === null) return probabilities
  const share = Math.min(1, Math.max(0, Number.isFinite(nonEnglish) ? nonEnglish : 0))
  let general = probabilities[rule.target]!
  for (const k of rule.general) general += probabilities[k]!
  for (const k of rule.general) probabilities[k] = probabilities[k]! * (1 - share)
  probabilities[rule.target] = general * share
  const kept = general * (1 - share)
  let own = 0
  for (const k of rule.general) own += probabilities[k]!
  if (own === 0 && kept > 0) for (const k of rule.general) probabilities[k] = kept / rule.general.length
  else if (own > 0) for (const k of rule.general) probabilities[k] = (probabilities[k]! * kept) / own
  return probabilities
}
