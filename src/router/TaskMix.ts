/**
 * The task as ranking sees it: the task types kept from the classification's distribution (5% or more,
 * renormalized), their benchmark weights mixed as `W_b = sum_t P(t) * w_{t,b}`, the expected answer tokens
 * `O = sum_t P(t) * out_t` and turns `T = sum_t P(t) * turns_t` (decisions.md, Router scoring), and the
 * multilingual benchmark's share for a prompt in another language (decisions.md, Router).
 */
import type { Catalog } from "./Catalog.js"
import {
  MULTILINGUAL_BENCHMARK,
  MULTILINGUAL_MAX_SHARE,
  PROBABILITY_TOLERANCE,
  TASK_TYPE_FLOOR
} from "./ScoringConstants.js"
import type { TaskType, Taxonomy } from "./Taxonomy.js"

/** One entry of a task-type distribution, as the classification produces it. */
export interface TaskTypeProbability {
  readonly taskType: string
  readonly probability: number
}

/** A task type kept for ranking, with its renormalized probability. */
export interface WeightedTaskType {
  readonly type: TaskType
  readonly probability: number
}

/** One non-zero entry of a benchmark weight vector, by catalog benchmark index. */
export interface BenchmarkWeight {
  readonly index: number
  readonly weight: number
}

/** The mixed benchmark weights (catalog order), expected answer tokens and turns of a task. */
export interface TaskMix {
  readonly types: ReadonlyArray<WeightedTaskType>
  readonly weights: ReadonlyArray<BenchmarkWeight>
  readonly outputTokens: number
  readonly turns: number
}

/**
 * Keeps the known task types at 5% or more (duplicates summed) and renormalizes them; when none reaches the floor
 * the fallback type alone counts, at probability 1. Throws when the fallback is not a task type of the taxonomy
 * (callers validate task types against the taxonomy first).
 */
export const keepTaskTypes = (
  taxonomy: Taxonomy,
  distribution: ReadonlyArray<TaskTypeProbability>,
  fallback: string
): ReadonlyArray<WeightedTaskType> => {
  const merged = new Map<string, number>()
  for (const { probability, taskType } of distribution) {
    if (taxonomy.taskTypesById.has(taskType) && Number.isFinite(probability) && probability > 0) {
      merged.set(taskType, (merged.get(taskType) ?? 0) + probability)
    }
  }
  const kept = [...merged].filter(([, probability]) => probability >= TASK_TYPE_FLOOR - PROBABILITY_TOLERANCE)
  const total = kept.reduce((sum, [, probability]) => sum + probability, 0)
  if (kept.length === 0 || total <= 0) {
    const type = taxonomy.taskTypesById.get(fallback)
    if (type === undefined) throw new Error(`Unknown task type "${fallback}": not in the taxonomy`)
    return [{ type, probability: 1 }]
  }
  return kept.map(([id, probability]) => ({ type: taxonomy.taskTypesById.get(id)!, probability: probability / total }))
}

/**
 * Mixes kept task types into the task's benchmark weights (each type's weights rescaled to sum to exactly 1, so
 * expected quality stays within 0..1), answer tokens and turns.
 */
export const mixTask = (catalog: Catalog, types: ReadonlyArray<WeightedTaskType>): TaskMix => {
  const byIndex = new Map<number, number>()
  let outputTokens = 0
  let turns = 0
  for (const { probability, type } of types) {
    outputTokens += probability * type.expectedOutputTokens
    turns += probability * type.expectedTurns
    const entries = Object.entries(type.benchmarkWeights)
    const total = entries.reduce((sum, [, weight]) => sum + weight, 0)
    for (const [benchmark, weight] of entries) {
      const index = catalog.benchmarkIndex.get(benchmark)
      if (index !== undefined && weight > 0) {
        byIndex.set(index, (byIndex.get(index) ?? 0) + (probability * weight) / total)
      }
    }
  }
  const weights = [...byIndex].map(([index, weight]) => ({ index, weight })).sort((a, b) => a.index - b.index)
  return { types, weights, outputTokens, turns }
}

/**
 * The weights with the multilingual benchmark joined in proportion to the `non_english` facet (decisions.md,
 * Router): a share `s = MULTILINGUAL_MAX_SHARE x P(non_english)` goes to `MULTILINGUAL_BENCHMARK` and the task's own
 * weights keep `1 - s`, so the vector still sums to 1. Unchanged when the catalog has no such benchmark or the
 * facet is 0 (or not a probability).
 */
export const withMultilingual = (
  catalog: Catalog,
  weights: ReadonlyArray<BenchmarkWeight>,
  nonEnglish: number
): ReadonlyArray<BenchmarkWeight> => {
  const index = catalog.benchmarkIndex.get(MULTILINGUAL_BENCHMARK)
  const facet = Number.isFinite(nonEnglish) ? Math.min(1, Math.max(0, nonEnglish)) : 0
  const share = MULTILINGUAL_MAX_SHARE * facet
  if (index === undefined || share <= 0) return weights
  const joined = new Map(weights.map(({ index: at, weight }) => [at, (1 - share) * weight] as const))
  joined.set(index, (joined.get(index) ?? 0) + share)
  return [...joined].map(([at, weight]) => ({ index: at, weight })).sort((a, b) => a.index - b.index)
}
