/**
 * How each policy orders the eligible candidates (decisions.md, Router scoring). `capability_heavy` and
 * `domain_skills` score expected quality. `balanced` and `cost_efficient` first rank the models at or above the
 * bar `tau = r * q_star`; the models below it follow in order of expected quality (nearest the bar first), scored
 * as the lowest score above the bar minus their shortfall `tau - q`, so `score` stays a descending sort key.
 * Ties: higher expected quality, then lower blended price, then id.
 */
import type { CatalogModel } from "./Catalog.js"
import {
  type BalancedWeights,
  COST_FLOOR_USD,
  LATENCY_FLOOR_MS,
  R_EASIEST,
  R_HARDEST
} from "./ScoringConstants.js"

/** The policies of the router, in the catalog's order. */
export const ROUTER_POLICIES = ["balanced", "cost_efficient", "capability_heavy", "domain_skills"] as const

/** One policy of the router. */
export type RouterPolicy = (typeof ROUTER_POLICIES)[number]

/** An eligible model with its figures for this task. */
export interface Candidate {
  readonly model: CatalogModel
  readonly quality: number
  readonly uncertainty: number
  readonly costUsd: number
  readonly latencyMs: number
}

/** A candidate with its policy score. */
export interface ScoredCandidate {
  readonly candidate: Candidate
  readonly score: number
}

/** The quality bar: best expected quality, the required share of it at this difficulty, and their product. */
export interface QualityBar {
  readonly qStar: number
  readonly r: number
  readonly tau: number
}

const clamp01 = (value: number): number => (Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0)

/** `r`, linear in the 0..1 difficulty score from R_EASIEST to R_HARDEST. */
export const requiredShare = (difficulty: number): number => R_EASIEST + (R_HARDEST - R_EASIEST) * clamp01(difficulty)

/** The bar over a non-empty candidate list. */
export const qualityBar = (candidates: ReadonlyArray<Candidate>, difficulty: number): QualityBar => {
  const qStar = candidates.reduce((best, candidate) => Math.max(best, candidate.quality), 0)
  const r = requiredShare(difficulty)
  return { qStar, r, tau: r * qStar }
}

/** The tie order: higher expected quality, then lower blended price, then id. */
export const compareTies = (a: Candidate, b: Candidate): number =>
  b.quality - a.quality ||
  a.model.entry.blended_price_per_mtok - b.model.entry.blended_price_per_mtok ||
  (a.model.entry.id < b.model.entry.id ? -1 : a.model.entry.id > b.model.entry.id ? 1 : 0)

const byScore = (a: ScoredCandidate, b: ScoredCandidate): number =>
  b.score - a.score || compareTies(a.candidate, b.candidate)

/** Scores every candidate by expected quality, best first (`capability_heavy`, `domain_skills`). */
export const scoreByQuality = (candidates: ReadonlyArray<Candidate>): Array<ScoredCandidate> =>
  candidates.map((candidate) => ({ candidate, score: candidate.quality })).sort(byScore)

const withBelowBar = (
  above: Array<ScoredCandidate>,
  below: ReadonlyArray<Candidate>,
  bar: QualityBar
): Array<ScoredCandidate> => {
  const floor = above.reduce((lowest, scored) => Math.min(lowest, scored.score), Number.POSITIVE_INFINITY)
  const start = Number.isFinite(floor) ? floor : 0
  const rest = [...below].sort(compareTies).map((candidate) => ({
    candidate,
    score: start - (bar.tau - candidate.quality)
  }))
  return [...above.sort(byScore), ...rest]
}

/** `cost_efficient`: at or above the bar by lowest estimated cost (score = minus the cost), then the rest. */
export const scoreCostEfficient = (candidates: ReadonlyArray<Candidate>, bar: QualityBar): Array<ScoredCandidate> =>
  withBelowBar(
    candidates.filter((candidate) => candidate.quality >= bar.tau).map((candidate) => ({
      candidate,
      score: -candidate.costUsd
    })),
    candidates.filter((candidate) => candidate.quality < bar.tau),
    bar
  )

/** Log-scales values into 0..1 over the list (all 0 when they are equal); `floor` keeps log away from 0. */
export const logScale = (values: ReadonlyArray<number>, floor: number): Array<number> => {
  const logs = values.map((value) => Math.log(Math.max(value, floor)))
  const low = Math.min(...logs)
  const high = Math.max(...logs)
  return logs.map((value) => (high > low ? (value - low) / (high - low) : 0))
}

/**
 * `balanced`: at or above the bar by `w_quality * q / q_star - w_cost * c - w_speed * l`, where `c` and `l` are the
 * log-scaled cost and latency in 0..1 over those same models; then the rest.
 */
export const scoreBalanced = (
  candidates: ReadonlyArray<Candidate>,
  bar: QualityBar,
  weights: BalancedWeights
): Array<ScoredCandidate> => {
  const above = candidates.filter((candidate) => candidate.quality >= bar.tau)
  const cost = logScale(above.map((candidate) => candidate.costUsd), COST_FLOOR_USD)
  const latency = logScale(above.map((candidate) => candidate.latencyMs), LATENCY_FLOOR_MS)
  return withBelowBar(
    above.map((candidate, index) => ({
      candidate,
      score: weights.quality * (bar.qStar > 0 ? candidate.quality / bar.qStar : 1) -
        weights.cost * cost[index]! -
        weights.speed * latency[index]!
    })),
    candidates.filter((candidate) => candidate.quality < bar.tau),
    bar
  )
}
