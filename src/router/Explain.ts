/**
 * What a ranking entry says about itself: strengths (the three benchmarks contributing most to its expected
 * quality, `W_b` times the effective value), weaknesses (the two benchmarks where its weighted effective value
 * trails the best eligible candidate most), the imputed figures, the one-sentence reason for the chosen model,
 * and the rounding of reported doubles (significant digits, which never reorders sorted values).
 */
import type { Catalog, CatalogModel } from "./Catalog.js"
import { difficultyLabel } from "./classification/Difficulty.js"
import { effectiveValue } from "./ExpectedQuality.js"
import type { Candidate, QualityBar, RouterPolicy } from "./Policies.js"
import { MAX_STRENGTHS, MAX_WEAKNESSES, REPORTED_SIGNIFICANT_DIGITS } from "./ScoringConstants.js"
import type { BenchmarkWeight } from "./TaskMix.js"

/** A ranking entry's strength: a benchmark and its contribution to expected quality. */
export interface Strength {
  readonly benchmark: string
  readonly name: string
  readonly contribution: number
}

/** A ranking entry's weakness: a benchmark and the expected quality it trails the best candidate by there. */
export interface Weakness {
  readonly benchmark: string
  readonly name: string
  readonly gap: number
}

const EXACT_POWERS_OF_TEN = Array.from({ length: 23 }, (_, exponent) => 10 ** exponent)

/**
 * Rounds a reported double to REPORTED_SIGNIFICANT_DIGITS, half away from zero (so `-x` rounds to minus the rounding
 * of `x`); monotone, so a sorted list stays sorted. Arithmetic on exact powers of ten, not strings, for speed.
 */
export const roundReported = (value: number): number => {
  if (value === 0 || !Number.isFinite(value)) return value
  const magnitude = Math.abs(value)
  const shift = REPORTED_SIGNIFICANT_DIGITS - 1 - Math.floor(Math.log10(magnitude))
  const power = EXACT_POWERS_OF_TEN[Math.abs(shift)]
  if (power === undefined) return Number(value.toPrecision(REPORTED_SIGNIFICANT_DIGITS))
  const rounded = shift >= 0 ? Math.round(magnitude * power) / power : Math.round(magnitude / power) * power
  return value < 0 ? -rounded : rounded
}

const byValueThenId = <A extends { readonly id: string; readonly value: number }>(a: A, b: A): number =>
  b.value - a.value || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** The top benchmarks by contribution `W_b * effective v_b` (positive contributions only). */
export const strengthsOf = (
  catalog: Catalog,
  model: CatalogModel,
  weights: ReadonlyArray<BenchmarkWeight>
): ReadonlyArray<Strength> =>
  weights
    .map(({ index, weight }) => ({
      index,
      id: catalog.benchmarks[index]!.id,
      value: weight * effectiveValue(model, index)
    }))
    .filter((item) => item.value > 0)
    .sort(byValueThenId)
    .slice(0, MAX_STRENGTHS)
    .map(({ id, index, value }) => ({
      benchmark: id,
      name: catalog.benchmarks[index]!.name,
      contribution: roundReported(value)
    }))

/** The best effective value of each weighted benchmark over the eligible models, by benchmark index. */
export const bestValues = (
  models: ReadonlyArray<CatalogModel>,
  weights: ReadonlyArray<BenchmarkWeight>
): ReadonlyMap<number, number> => {
  const best = new Map<number, number>()
  for (const { index } of weights) {
    let value = 0
    for (const model of models) value = Math.max(value, effectiveValue(model, index))
    best.set(index, value)
  }
  return best
}

/** The benchmarks where `W_b * (best - effective v_b)` is largest and positive. */
export const weaknessesOf = (
  catalog: Catalog,
  model: CatalogModel,
  weights: ReadonlyArray<BenchmarkWeight>,
  best: ReadonlyMap<number, number>
): ReadonlyArray<Weakness> =>
  weights
    .map(({ index, weight }) => ({
      index,
      id: catalog.benchmarks[index]!.id,
      value: weight * ((best.get(index) ?? 0) - effectiveValue(model, index))
    }))
    .filter((item) => item.value > 0)
    .sort(byValueThenId)
    .slice(0, MAX_WEAKNESSES)
    .map(({ id, index, value }) => ({
      benchmark: id,
      name: catalog.benchmarks[index]!.name,
      gap: roundReported(value)
    }))

/** The imputed figures behind an entry: weighted benchmarks without a measurement, then the reasoning factor. */
export const imputedOf = (
  catalog: Catalog,
  model: CatalogModel,
  weights: ReadonlyArray<BenchmarkWeight>
): ReadonlyArray<string> => [
  ...weights.filter(({ index }) => model.measured[index] !== true).map(({ index }) => catalog.benchmarks[index]!.id),
  ...(model.reasoningFactorImputed ? ["reasoning_token_factor"] : [])
]

/** The facts the reason sentence is built from. */
export interface ReasonFacts {
  readonly policy: RouterPolicy
  readonly chosen: Candidate
  readonly bar: QualityBar | null
  readonly difficulty: number
  readonly topTaskType: string
  readonly topProbability: number
  readonly mixedTypes: number
  readonly eligible: number
  /** `domain_skills` only: its most probable task type is under 40%. */
  readonly lowConfidence: boolean
  /** The classified family, when its probability is under the family confidence bar; null otherwise. */
  readonly unsureFamily: { readonly family: string; readonly probability: number } | null
}

const usd = (value: number): string => (value < 0.000001 ? "under $0.000001" : `$${value.toPrecision(3)}`)

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`

/** One sentence naming the chosen model and the figures that decided it, with the confidence caveats. */
export const reasonSentence = (facts: ReasonFacts): string => {
  const sentence = policySentence(facts)
  const family = facts.unsureFamily
  return family === null
    ? sentence
    : `${sentence.slice(0, -1)} (uncertain classification: the most probable family, ${family.family}, has probability ` +
      `${(family.probability * 100).toFixed(0)}%).`
}

const policySentence = (facts: ReasonFacts): string => {
  const { bar, chosen, eligible, policy, topTaskType } = facts
  const pool = `among ${eligible} eligible model${eligible === 1 ? "" : "s"}`
  const quality = chosen.quality.toFixed(2)
  const figures = `estimated ${usd(chosen.costUsd)} and ${seconds(chosen.latencyMs)}`
  const task = facts.mixedTypes > 1 ? `this task (mostly ${topTaskType})` : `this ${topTaskType} task`
  const head = `Chose ${chosen.model.entry.name}`
  switch (policy) {
    case "domain_skills": {
      const caveat = facts.lowConfidence
        ? ` (low confidence: ${topTaskType} has probability ${(facts.topProbability * 100).toFixed(0)}%)`
        : ""
      return `${head}: expected quality ${quality} on ${topTaskType} alone, ${figures} for this task; ` +
        `highest on the most probable task type ${pool}${caveat}.`
    }
    case "capability_heavy":
      return `${head}: expected quality ${quality}, ${figures} for ${task}; highest expected quality ${pool}.`
    case "balanced":
    case "cost_efficient": {
      const barText = bar === null
        ? ""
        : ` (bar ${bar.tau.toFixed(2)} at ${difficultyLabel(facts.difficulty)} difficulty)`
      const why = policy === "cost_efficient"
        ? "cheapest above the bar"
        : "best balance of quality, cost and speed above the bar"
      return `${head}: expected quality ${quality}${barText}, ${figures} for ${task}; ${why} ${pool}.`
    }
  }
}
