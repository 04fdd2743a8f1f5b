/**
 * Every constant of the router's scoring, in one place (decisions.md, Router scoring: "the constants are named in
 * one module and documented in the project"). `docs/router-scoring.md` explains them for operators.
 */

/** Latency classes of a select request; under `balanced` they set the default weights. */
export type LatencyClass = "interactive" | "standard" | "batch"

/** Weights of the `balanced` score: quality share of the bar, log cost and log latency. */
export interface BalancedWeights {
  readonly quality: number
  readonly cost: number
  readonly speed: number
}

/** Imputation penalty: an imputed benchmark counts 75% of its predicted value, a measurement counting in full. */
export const LAMBDA = 0.25

/** Task types under 5% probability are dropped before mixing: too unlikely to shape the benchmark weights. */
export const TASK_TYPE_FLOOR = 0.05

/** Slack on probability comparisons, so 0.05 computed as 0.5 x 0.1 still counts as reaching the floor. */
export const PROBABILITY_TOLERANCE = 1e-12

/** Required share of the best expected quality at difficulty 0: easy tasks accept a model 20% below the best. */
export const R_EASIEST = 0.8

/** Required share at difficulty 1: hard tasks accept only models within 2% of the best. */
export const R_HARDEST = 0.98

/** Default `balanced` weights per latency class: interactive weighs speed most, batch not at all. */
export const DEFAULT_BALANCED_WEIGHTS: Readonly<Record<LatencyClass, BalancedWeights>> = {
  interactive: { quality: 0.4, cost: 0.25, speed: 0.35 },
  standard: { quality: 0.5, cost: 0.35, speed: 0.15 },
  batch: { quality: 0.5, cost: 0.5, speed: 0 }
}

/** `domain_skills` is low-confidence when its most probable task type is under 40% (spec, low_confidence). */
export const LOW_CONFIDENCE_BELOW = 0.4

/**
 * Under any policy, the reason sentence notes an uncertain classification when the most probable family is under
 * 45%: about where the calibrated classifier's family, on sources it never saw, stops being right more often than
 * not. It never sets `low_confidence`, which is `domain_skills`'s rule alone (decisions.md, Router).
 */
export const FAMILY_LOW_CONFIDENCE_BELOW = 0.45

/** The benchmark that joins the weights of a prompt in another language (decisions.md, Router). */
export const MULTILINGUAL_BENCHMARK = "aa_multilingual"

/** Its largest share of the weight vector, reached when the `non_english` facet is 1 (decisions.md, Router). */
export const MULTILINGUAL_MAX_SHARE = 0.3

/** At most ten ranking entries (spec, Router select response). */
export const MAX_RANKING_ENTRIES = 10

/** Strengths listed per entry: the top three benchmarks by contribution (spec, ranking entry). */
export const MAX_STRENGTHS = 3

/** Weaknesses listed per entry: up to two benchmarks where the model trails the best candidate (spec). */
export const MAX_WEAKNESSES = 2

/** Smallest cost taken by the log scale of `balanced` (USD), so a free estimate cannot reach log(0). */
export const COST_FLOOR_USD = 1e-9

/** Smallest latency taken by the log scale of `balanced` (ms), for the same reason. */
export const LATENCY_FLOOR_MS = 1

/** Significant digits of reported doubles: enough to tell entries apart, and rounding this way keeps the order. */
export const REPORTED_SIGNIFICANT_DIGITS = 6
