/**
 * Ranks the catalog for a classified task, as a pure function, with exactly the structure of decisions.md (Router
 * scoring): filters in their fixed order, task weights mixed from the task types at 5% or more, expected quality
 * with the imputation penalty, estimated cost and latency, the quality bar and the policy's order, ten entries at
 * most. Constants live in `ScoringConstants.ts`. Choices where decisions.md leaves room (docs/router-scoring.md):
 * - Imputation uses all of a model's measured benchmarks and catalog means over the whole catalog, computed once
 *   per load (`Catalog.ts`); a benchmark nobody measured imputes 0. A null reasoning factor is the median of the
 *   reasoning models (a null factor means a reasoning model).
 * - Task types under 5% are dropped (a 1e-12 slack absorbs rounding); if none is left, `topTaskType` alone counts.
 *   Each type's weights are rescaled to sum to exactly 1.
 * - `O` and `T` always come from the full mix, also under `domain_skills`, so filters, cost and latency do not
 *   depend on the policy; `domain_skills` changes only the weights of expected quality (the top type's alone).
 * - `max_latency_ms` drops a model whose speed or first-token time is missing. `context_fits_input` keeps a model
 *   whose context equals `input_tokens_est`. Empty `include`/`providers` lists are not set.
 * - `balanced`: `c` and `l` are min-max scaled over the models at or above the bar (all 0 when they are equal),
 *   after a floor of 1e-9 USD and 1 ms. `weights` are rescaled to sum to 1; all zero falls back to the defaults of
 *   the latency class.
 * - Below-bar models (`balanced`, `cost_efficient`) follow the others by expected quality, scored as the lowest
 *   score above the bar minus their shortfall `tau - q`, so `score` is always a descending sort key.
 * - `low_confidence` compares the probability the caller gave `topTaskType` with 0.40 (before the 5% floor) under
 *   `domain_skills` and is false under every other policy (decisions.md, Router). A classified family under 45%
 *   is noted in the reason sentence only, under any policy.
 * - The quality weights (the mix's, or the top type's under `domain_skills`) take `aa_multilingual` in proportion
 *   to the `nonEnglish` facet (`withMultilingual`); `O`, `T`, cost and latency do not depend on it.
 * - Strength contribution and weakness gap are in expected-quality units: `W_b * e_b` and `W_b * (best e_b - e_b)`,
 *   `e_b` the effective value (imputed values with the penalty), the best over the eligible models; `imputed` lists
 *   the weighted benchmarks without a measurement, then `reasoning_token_factor` when it was replaced.
 * - Reported doubles keep 6 significant digits; order is decided on unrounded values.
 */
import type { Catalog } from "./Catalog.js"
import { assessQuality } from "./ExpectedQuality.js"
import { estimateCostUsd, estimateLatencyMs } from "./Estimates.js"
import {
  bestValues,
  imputedOf,
  reasonSentence,
  roundReported,
  type Strength,
  strengthsOf,
  type Weakness,
  weaknessesOf
} from "./Explain.js"
import { applyFilters, type CatalogFilters, type FilterApplied } from "./Filters.js"
import {
  type Candidate,
  qualityBar,
  type RouterPolicy,
  type ScoredCandidate,
  scoreBalanced,
  scoreByQuality,
  scoreCostEfficient
} from "./Policies.js"
import {
  type BalancedWeights,
  DEFAULT_BALANCED_WEIGHTS,
  type LatencyClass,
  FAMILY_LOW_CONFIDENCE_BELOW,
  LOW_CONFIDENCE_BELOW,
  MAX_RANKING_ENTRIES
} from "./ScoringConstants.js"
import { type BenchmarkWeight, keepTaskTypes, mixTask, type TaskTypeProbability, withMultilingual } from "./TaskMix.js"
import type { Taxonomy } from "./Taxonomy.js"

/** Everything ranking reads: the loaded data, the classified task and the request's policy, weights and filters. */
export interface RankInput {
  readonly catalog: Catalog
  readonly taxonomy: Taxonomy
  readonly taskDistribution: ReadonlyArray<TaskTypeProbability>
  readonly topTaskType: string
  readonly difficulty: number
  readonly policy: RouterPolicy
  readonly weights: BalancedWeights | null
  readonly latency: LatencyClass
  readonly filters: CatalogFilters
  readonly maxLatencyMs: number | null
  readonly inputTokensEst: number
  /** The classified most probable family and its probability; absent when the caller fixed the task. */
  readonly familyConfidence?: { readonly family: string; readonly probability: number } | undefined
  /** P(the prompt is not in English): the `non_english` facet; absent counts as 0. */
  readonly nonEnglish?: number | undefined
}

/** One ranking entry, exactly the wire fields of the spec. */
export interface RankingEntry {
  readonly id: string
  readonly name: string
  readonly provider: string
  readonly open_weights: boolean
  readonly score: number
  readonly blended_price_per_mtok: number
  readonly domain_score: number
  readonly expected_quality: number
  readonly uncertainty: number
  readonly estimated_cost_usd: number
  readonly estimated_latency_ms: number
  readonly latency_estimated: boolean
  readonly strengths: ReadonlyArray<Strength>
  readonly weaknesses: ReadonlyArray<Weakness>
  readonly imputed: ReadonlyArray<string>
}

/** The wire `threshold` object. */
export interface Threshold {
  readonly q_star: number
  readonly r: number
  readonly tau: number
}

/** Either no model survived the filters, or the ranking (best first) with its bar, confidence and reason. */
export type RankOutcome =
  | { readonly _tag: "NoEligibleModel"; readonly filtersApplied: ReadonlyArray<FilterApplied> }
  | {
    readonly _tag: "Ranked"
    readonly ranking: ReadonlyArray<RankingEntry>
    readonly threshold: Threshold | null
    readonly filtersApplied: ReadonlyArray<FilterApplied>
    readonly lowConfidence: boolean
    readonly reason: string
  }

/** The `balanced` weights: the request's, rescaled to sum to 1, or the latency class's defaults. */
export const balancedWeights = (weights: BalancedWeights | null, latency: LatencyClass): BalancedWeights => {
  const total = weights === null ? 0 : weights.quality + weights.cost + weights.speed
  return weights !== null && Number.isFinite(total) && total > 0
    ? { quality: weights.quality / total, cost: weights.cost / total, speed: weights.speed / total }
    : DEFAULT_BALANCED_WEIGHTS[latency]
}

/** `low_confidence` (the top type under `domain_skills` alone), and the uncertain family the reason notes. */
const confidenceOf = (input: RankInput) => {
  const topProbability = input.taskDistribution
    .filter((item) => item.taskType === input.topTaskType)
    .reduce((sum, item) => sum + item.probability, 0)
  const typeUnsure = input.policy === "domain_skills" && topProbability < LOW_CONFIDENCE_BELOW
  const family = input.familyConfidence
  const unsureFamily = family !== undefined && family.probability < FAMILY_LOW_CONFIDENCE_BELOW ? family : null
  return { topProbability, typeUnsure, unsureFamily, lowConfidence: typeUnsure }
}

/** A candidate's wire entry: its reported figures and what explains its place (`best`: see `bestValues`). */
const rankingEntry = (
  catalog: Catalog,
  candidate: Candidate,
  score: number,
  { best, weights }: { readonly weights: ReadonlyArray<BenchmarkWeight>; readonly best: ReadonlyMap<number, number> }
): RankingEntry => {
  const { entry } = candidate.model
  return {
    id: entry.id,
    name: entry.name,
    provider: entry.provider,
    open_weights: entry.open_weights,
    score: roundReported(score),
    blended_price_per_mtok: entry.blended_price_per_mtok,
    domain_score: roundReported(candidate.quality),
    expected_quality: roundReported(candidate.quality),
    uncertainty: roundReported(candidate.uncertainty),
    estimated_cost_usd: roundReported(candidate.costUsd),
    estimated_latency_ms: roundReported(candidate.latencyMs),
    latency_estimated: candidate.model.latencyEstimated,
    strengths: strengthsOf(catalog, candidate.model, weights),
    weaknesses: weaknessesOf(catalog, candidate.model, weights, best),
    imputed: imputedOf(catalog, candidate.model, weights)
  }
}

/** Ranks the catalog for the task; pure. Throws only when `topTaskType` is not in the taxonomy (a caller bug). */
export const rank = (input: RankInput): RankOutcome => {
  const { catalog, policy } = input
  const top = input.taxonomy.taskTypesById.get(input.topTaskType)
  if (top === undefined) throw new Error(`Unknown task type "${input.topTaskType}": not in the taxonomy`)
  const mix = mixTask(catalog, keepTaskTypes(input.taxonomy, input.taskDistribution, input.topTaskType))
  const { eligible, filtersApplied } = applyFilters(catalog.models, {
    filters: input.filters,
    maxLatencyMs: input.maxLatencyMs,
    inputTokensEst: input.inputTokensEst,
    latencyMs: (model) => estimateLatencyMs(model, mix.outputTokens)
  })
  if (eligible.length === 0) return { _tag: "NoEligibleModel", filtersApplied }
  const taskWeights = policy === "domain_skills" ? mixTask(catalog, [{ type: top, probability: 1 }]).weights : mix.weights
  const weights = withMultilingual(catalog, taskWeights, input.nonEnglish ?? 0)
  const candidates = eligible.map((model): Candidate => ({
    model,
    ...assessQuality(model, weights),
    costUsd: estimateCostUsd(model, mix, input.inputTokensEst),
    latencyMs: estimateLatencyMs(model, mix.outputTokens)
  }))
  const bar = qualityBar(candidates, input.difficulty)
  const scored: ReadonlyArray<ScoredCandidate> = policy === "balanced"
    ? scoreBalanced(candidates, bar, balancedWeights(input.weights, input.latency))
    : policy === "cost_efficient"
    ? scoreCostEfficient(candidates, bar)
    : scoreByQuality(candidates)
  const best = bestValues(eligible, weights)
  const ranking = scored.slice(0, MAX_RANKING_ENTRIES).map(({ candidate, score }) =>
    rankingEntry(catalog, candidate, score, { weights, best })
  )
  const { lowConfidence, topProbability, typeUnsure, unsureFamily } = confidenceOf(input)
  const barred = policy === "balanced" || policy === "cost_efficient"
  return {
    _tag: "Ranked",
    ranking,
    threshold: barred
      ? { q_star: roundReported(bar.qStar), r: roundReported(bar.r), tau: roundReported(bar.tau) }
      : null,
    filtersApplied,
    lowConfidence,
    reason: reasonSentence({
      policy,
      chosen: scored[0]!.candidate,
      bar: barred ? bar : null,
      difficulty: input.difficulty,
      topTaskType: input.topTaskType,
      topProbability,
      mixedTypes: mix.types.length,
      eligible: eligible.length,
      lowConfidence: typeUnsure,
      unsureFamily
    })
  }
}
