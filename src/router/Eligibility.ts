/**
 * The filters, checked before the classification is admitted, so a request whose filters leave no model is refused
 * (`400 no_eligible_model`) before anything is charged. Every filter but `max_latency_ms` is independent of the
 * classification. `max_latency_ms` depends on the task's expected answer tokens `O`, a mix of the task types'
 * figures, so it is checked here with the smallest `O` any task type has (latency grows with `O`, so a model too
 * slow for it is too slow for every mix); with a caller-fixed task type or domain `O` is known and the check exact.
 */
import { Result } from "effect"
import { NoEligibleModel } from "../../schema/Errors.js"
import type { Catalog } from "./Catalog.js"
import { estimateLatencyMs } from "./Estimates.js"
import { applyFilters, type FilterApplied } from "./Filters.js"
import type { SelectionRequest } from "./SelectRequest.js"
import type { Taxonomy } from "./Taxonomy.js"

/** The fewest expected answer tokens the classified task can have: exact when fixed, else the taxonomy's minimum. */
export const lowestOutputTokens = (taxonomy: Taxonomy, request: SelectionRequest): number => {
  const { domain, taskType } = request.fixed
  const fixed = taskType !== undefined
    ? taxonomy.taskTypesById.get(taskType)
    : domain !== undefined
    ? taxonomy.familyDefaults.get(domain)
    : undefined
  if (fixed !== undefined) return fixed.expectedOutputTokens
  return taxonomy.taskTypes.reduce((lowest, type) => Math.min(lowest, type.expectedOutputTokens), Number.POSITIVE_INFINITY)
}

/** The refusal of a request whose filters removed every model, naming what each filter removed. */
export const noEligibleModel = (filtersApplied: ReadonlyArray<FilterApplied>, detail = ""): NoEligibleModel =>
  new NoEligibleModel({
    message: `no model passes the filters (${
      filtersApplied.map((applied) => `${applied.filter} removed ${applied.removed}`).join(", ")
    })${detail}`
  })

/** Succeeds when at least one model can pass the filters for some classification of the task. */
export const checkEligibility = (
  data: { readonly catalog: Catalog; readonly taxonomy: Taxonomy },
  request: SelectionRequest
): Result.Result<void, NoEligibleModel> => {
  const outputTokens = lowestOutputTokens(data.taxonomy, request)
  const { eligible, filtersApplied } = applyFilters(data.catalog.models, {
    filters: request.filters,
    maxLatencyMs: request.maxLatencyMs,
    inputTokensEst: request.inputTokensEst,
    latencyMs: (model) => estimateLatencyMs(model, outputTokens)
  })
  return eligible.length > 0 ? Result.void : Result.fail(noEligibleModel(filtersApplied))
}
