/**
 * Catalog-wide figures computed once per load: benchmark means over measured values, the imputed value of every
 * missing benchmark (decisions.md, Router scoring), and the medians that stand in for a missing speed, first-token
 * time or reasoning_token_factor.
 */
import type { CatalogModelEntry } from "./CatalogSchema.js"

/** The median of a non-empty list (the mean of the two middle values for an even count); NaN when empty. */
export const median = (values: ReadonlyArray<number>): number => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** Whether a model spends reasoning tokens: a factor above 1, or an unknown (null) factor. */
export const isReasoningModel = (entry: CatalogModelEntry): boolean =>
  entry.reasoning_token_factor === null || entry.reasoning_token_factor > 1

/** The mean normalized value of each benchmark over the models that measured it; null when none did. */
export const benchmarkMeans = (
  benchmarkIds: ReadonlyArray<string>,
  entries: ReadonlyArray<CatalogModelEntry>
): ReadonlyArray<number | null> =>
  benchmarkIds.map((id) => {
    let sum = 0
    let count = 0
    for (const entry of entries) {
      const value = entry.benchmarks_normalized[id]
      if (value !== undefined && value !== null) {
        sum += value
        count += 1
      }
    }
    return count === 0 ? null : sum / count
  })

/** A model's value per benchmark: measured where it has one, else imputed from its mean ratio to the catalog. */
export const imputeBenchmarks = (
  benchmarkIds: ReadonlyArray<string>,
  means: ReadonlyArray<number | null>,
  entry: CatalogModelEntry
): { readonly values: ReadonlyArray<number>; readonly measured: ReadonlyArray<boolean> } => {
  let ratioSum = 0
  let ratioCount = 0
  const raw = benchmarkIds.map((id) => entry.benchmarks_normalized[id] ?? null)
  raw.forEach((value, index) => {
    const mean = means[index] ?? null
    if (value !== null && mean !== null && mean > 0) {
      ratioSum += value / mean
      ratioCount += 1
    }
  })
  const ratio = ratioCount === 0 ? 1 : ratioSum / ratioCount
  return {
    values: raw.map((value, index) => value ?? Math.min(1, Math.max(0, ratio * (means[index] ?? 0)))),
    measured: raw.map((value) => value !== null)
  }
}

/** The medians that replace missing figures. */
export interface CatalogMedians {
  readonly outputTokensPerS: number
  readonly ttftMs: number
  readonly reasoningFactor: { readonly reasoning: number; readonly standard: number }
}

/** Medians over the models that have the figure; a kind with no known factor falls back to all known factors. */
export const catalogMedians = (entries: ReadonlyArray<CatalogModelEntry>): CatalogMedians => {
  const known = (pick: (entry: CatalogModelEntry) => number | null) =>
    entries.map(pick).filter((value): value is number => value !== null)
  const factors = known((entry) => entry.reasoning_token_factor)
  const reasoning = factors.filter((factor) => factor > 1)
  const standard = factors.filter((factor) => factor <= 1)
  return {
    outputTokensPerS: median(known((entry) => entry.output_tokens_per_s)),
    ttftMs: median(known((entry) => entry.ttft_ms)),
    reasoningFactor: {
      reasoning: median(reasoning.length > 0 ? reasoning : factors),
      standard: median(standard.length > 0 ? standard : factors)
    }
  }
}
