/**
 * A model's expected quality for a task: `sum_b W_b * v_b - LAMBDA * sum_{imputed b} W_b * v_b`, i.e. the weighted
 * sum of effective values where an imputed value counts `1 - LAMBDA` of itself; `uncertainty` is the weight that
 * fell on imputed values (decisions.md, Router scoring).
 */
import type { CatalogModel } from "./Catalog.js"
import { LAMBDA } from "./ScoringConstants.js"
import type { BenchmarkWeight } from "./TaskMix.js"

/** Expected quality (0..1) and the share of the weight resting on imputed benchmarks. */
export interface QualityAssessment {
  readonly quality: number
  readonly uncertainty: number
}

/** A benchmark value as it enters expected quality: measured in full, imputed with the LAMBDA penalty. */
export const effectiveValue = (model: CatalogModel, index: number): number => {
  const value = model.values[index] ?? 0
  return model.measured[index] === true ? value : (1 - LAMBDA) * value
}

/** The expected quality and uncertainty of a model under benchmark weights. */
export const assessQuality = (model: CatalogModel, weights: ReadonlyArray<BenchmarkWeight>): QualityAssessment => {
  let quality = 0
  let uncertainty = 0
  for (const { index, weight } of weights) {
    quality += weight * effectiveValue(model, index)
    if (model.measured[index] !== true) uncertainty += weight
  }
  return { quality, uncertainty }
}
