/**
 * Turns the decision model's answers into the wire `classification` and the inputs of `rank` (decisions.md,
 * Router): `domain` is the family question's distribution (all families, summing to 1); the task-type distribution
 * is `P(type) = P(family) x P(type | family)` over the families of 5% or more, renormalized; `difficulty` has label
 * probabilities summed from the levels and the most probable of them as its label, the score ranking reads kept in
 * that label's band (`Difficulty.ts`). A caller-fixed task type wins over a fixed domain (whose default type is
 * used); either gives probability 1.0 and `fixed` true.
 */
import { type DifficultyLabel, labelProbabilities, mostProbableLabel, scoreWithin } from "./classification/Difficulty.js"
import { PROBABILITY_TOLERANCE, TASK_TYPE_FLOOR } from "./ScoringConstants.js"
import type { TaskTypeProbability } from "./TaskMix.js"
import type { TaskType, Taxonomy } from "./Taxonomy.js"

// The questions live in their own module; re-exported so callers reach the whole classifier through this one.
export {
  type ClassificationQuestion,
  classificationQuestions,
  type ClassificationQuestionSet,
  taskTypeQuestionName
} from "./classification/ClassificationQuestions.js"

/** Where the task type comes from: the family question, or the caller's `task_type` or `domain`. */
export type ClassificationSource =
  | { readonly familyProbabilities: Readonly<Record<string, number>> }
  | { readonly fixedTaskType: string; readonly fixedDomain?: string | undefined }
  | { readonly fixedDomain: string }

/** The decision model's answers, by question: task types per family, difficulty levels and facets. */
export type ClassificationAnswers = ClassificationSource & {
  readonly taskTypeProbabilities: Readonly<Record<string, Readonly<Record<string, number>>>>
  readonly difficulty: { readonly score: number; readonly probabilities: ReadonlyArray<number> }
  readonly facets: Readonly<Record<string, number>>
}

/** A wire label object: the label and every label's probability. */
export interface LabelObject<L extends string = string> {
  readonly label: L
  readonly probabilities: Readonly<Record<L, number>>
}

/** The wire `classification.task_type`. */
export interface TaskTypeLabel {
  readonly label: string
  readonly family: string
  readonly top: ReadonlyArray<{ readonly label: string; readonly probability: number }>
  readonly fixed: boolean
}

/** The wire `classification` object. */
export interface Classification {
  readonly domain: LabelObject
  readonly difficulty: LabelObject<DifficultyLabel>
  readonly task_type: TaskTypeLabel
  readonly facets: Readonly<Record<string, number>>
}

/** The classification with what `rank` reads from it. */
export interface InterpretedClassification {
  readonly classification: Classification
  readonly taskDistribution: ReadonlyArray<TaskTypeProbability>
  readonly topTaskType: string
  readonly difficulty: number
}

/** Entries of `task_type.top`. */
export const TOP_TASK_TYPES = 5

const positive = (value: number | undefined): number =>
  value !== undefined && Number.isFinite(value) && value > 0 ? value : 0

const normalize = (keys: ReadonlyArray<string>, raw: Readonly<Record<string, number>>): Record<string, number> => {
  const total = keys.reduce((sum, key) => sum + positive(raw[key]), 0)
  return Object.fromEntries(keys.map((key) => [key, total > 0 ? positive(raw[key]) / total : 1 / keys.length]))
}

const mostProbable = (probabilities: Readonly<Record<string, number>>, keys: ReadonlyArray<string>): string =>
  keys.reduce((best, key) => ((probabilities[key] ?? 0) > (probabilities[best] ?? 0) ? key : best), keys[0]!)

const fixedType = (taxonomy: Taxonomy, source: ClassificationSource): TaskType | null => {
  if ("fixedTaskType" in source) {
    const type = taxonomy.taskTypesById.get(source.fixedTaskType)
    if (type === undefined) throw new Error(`Unknown task type "${source.fixedTaskType}": not in the taxonomy`)
    return type
  }
  if ("fixedDomain" in source) {
    const type = taxonomy.familyDefaults.get(source.fixedDomain)
    if (type === undefined) throw new Error(`Unknown domain "${source.fixedDomain}": not a family of the taxonomy`)
    return type
  }
  return null
}

/** `P(type) = P(family) x P(type | family)` over families at 5% or more, renormalized, most probable first. */
export const taskTypeDistribution = (
  taxonomy: Taxonomy,
  families: Readonly<Record<string, number>>,
  conditional: Readonly<Record<string, Readonly<Record<string, number>>>>
): ReadonlyArray<TaskTypeProbability> => {
  const kept = taxonomy.families.filter((family) =>
    (families[family] ?? 0) >= TASK_TYPE_FLOOR - PROBABILITY_TOLERANCE
  )
  const used = kept.length > 0 ? kept : [mostProbable(families, taxonomy.families)]
  const joint = used.flatMap((family) => {
    const types = taxonomy.taskTypesByFamily.get(family) ?? []
    const answers = conditional[family] ?? {}
    const answered = types.some((type) => positive(answers[type.id]) > 0)
    const fallback = taxonomy.familyDefaults.get(family)?.id
    const within = answered ? normalize(types.map((type) => type.id), answers) : { [fallback ?? ""]: 1 }
    return types.map((type) => ({ taskType: type.id, probability: (families[family] ?? 0) * (within[type.id] ?? 0) }))
  })
  const total = joint.reduce((sum, item) => sum + item.probability, 0)
  return joint
    .filter((item) => item.probability > 0)
    .map((item) => ({ taskType: item.taskType, probability: item.probability / total }))
    .sort((a, b) => b.probability - a.probability)
}

/** Builds the wire classification and the ranking inputs from the decision model's answers. */
export const interpretClassification = (
  answers: ClassificationAnswers,
  taxonomy: Taxonomy
): InterpretedClassification => {
  const fixed = fixedType(taxonomy, answers)
  const families = "familyProbabilities" in answers
    ? normalize(taxonomy.families, answers.familyProbabilities)
    : Object.fromEntries(taxonomy.families.map((family) => [family, family === fixed?.family ? 1 : 0]))
  const taskDistribution = fixed === null
    ? taskTypeDistribution(taxonomy, families, answers.taskTypeProbabilities)
    : [{ taskType: fixed.id, probability: 1 }]
  const top = taskDistribution[0]!
  const topType = taxonomy.taskTypesById.get(top.taskType)!
  const expected = Math.min(1, Math.max(0, Number.isFinite(answers.difficulty.score) ? answers.difficulty.score : 0))
  const difficultyProbabilities = labelProbabilities(answers.difficulty.probabilities)
  const difficulty = mostProbableLabel(difficultyProbabilities, expected)
  const score = scoreWithin(expected, difficulty)
  return {
    classification: {
      domain: { label: fixed?.family ?? mostProbable(families, taxonomy.families), probabilities: families },
      difficulty: { label: difficulty, probabilities: difficultyProbabilities },
      task_type: {
        label: topType.id,
        family: topType.family,
        top: taskDistribution.slice(0, TOP_TASK_TYPES).map((item) => ({
          label: item.taskType,
          probability: item.probability
        })),
        fixed: fixed !== null
      },
      facets: { ...answers.facets }
    },
    taskDistribution,
    topTaskType: topType.id,
    difficulty: score
  }
}
