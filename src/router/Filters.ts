/**
 * The catalog filters of a select request, applied in the fixed order of decisions.md (Router scoring); each one
 * that removed at least one model is reported with its count. An empty `include` or `providers` list is taken as
 * not set; `max_latency_ms` also drops models whose speed or first-token time is not measured.
 */
import type { CatalogModel } from "./Catalog.js"

/** The `models` object of a select request (snake_case as on the wire); absent or null means not set. */
export interface CatalogFilters {
  readonly include?: ReadonlyArray<string> | null | undefined
  readonly exclude?: ReadonlyArray<string> | null | undefined
  readonly providers?: ReadonlyArray<string> | null | undefined
  readonly open_weights?: boolean | null | undefined
  readonly max_price_per_mtok?: number | null | undefined
  readonly min_context_tokens?: number | null | undefined
  readonly modalities?: ReadonlyArray<string> | null | undefined
}

/** The filter names of `filters_applied`, in the order they apply. */
export const FILTER_ORDER = [
  "include",
  "exclude",
  "providers",
  "open_weights",
  "max_price_per_mtok",
  "min_context_tokens",
  "context_fits_input",
  "modalities",
  "max_latency_ms"
] as const

/** One filter name of `filters_applied`. */
export type FilterName = (typeof FILTER_ORDER)[number]

/** One `filters_applied` element. */
export interface FilterApplied {
  readonly filter: FilterName
  readonly removed: number
}

/** What the filters read besides the `models` object. */
export interface FilterRequest {
  readonly filters: CatalogFilters
  readonly maxLatencyMs: number | null
  readonly inputTokensEst: number
  readonly latencyMs: (model: CatalogModel) => number
}

type Keep = (model: CatalogModel) => boolean

const nonEmpty = (list: ReadonlyArray<string> | null | undefined): ReadonlyArray<string> | null =>
  list === null || list === undefined || list.length === 0 ? null : list

const predicates = (request: FilterRequest): Record<FilterName, Keep | null> => {
  const { filters, inputTokensEst, latencyMs, maxLatencyMs } = request
  const include = nonEmpty(filters.include)
  const exclude = nonEmpty(filters.exclude)
  const providers = nonEmpty(filters.providers)
  const modalities = nonEmpty(filters.modalities)
  const openWeights = filters.open_weights ?? null
  const maxPrice = filters.max_price_per_mtok ?? null
  const minContext = filters.min_context_tokens ?? null
  const included = include === null ? null : new Set(include)
  const excluded = exclude === null ? null : new Set(exclude)
  const allowed = providers === null ? null : new Set(providers.map((provider) => provider.toLowerCase()))
  return {
    include: included === null ? null : (model) => included.has(model.entry.id),
    exclude: excluded === null ? null : (model) => !excluded.has(model.entry.id),
    providers: allowed === null ? null : (model) => allowed.has(model.entry.provider.toLowerCase()),
    open_weights: openWeights === null ? null : (model) => model.entry.open_weights === openWeights,
    max_price_per_mtok: maxPrice === null ? null : (model) => model.entry.blended_price_per_mtok <= maxPrice,
    min_context_tokens: minContext === null ? null : (model) => model.entry.context_tokens >= minContext,
    context_fits_input: (model) => model.entry.context_tokens >= inputTokensEst,
    modalities: modalities === null
      ? null
      : (model) => modalities.every((modality) => model.entry.modalities.includes(modality)),
    max_latency_ms: maxLatencyMs === null
      ? null
      : (model) => !model.latencyEstimated && latencyMs(model) <= maxLatencyMs
  }
}

/** Applies the filters in order; returns the eligible models (catalog order) and the filters that removed any. */
export const applyFilters = (
  models: ReadonlyArray<CatalogModel>,
  request: FilterRequest
): { readonly eligible: ReadonlyArray<CatalogModel>; readonly filtersApplied: ReadonlyArray<FilterApplied> } => {
  const keep = predicates(request)
  let eligible = models
  const filtersApplied: Array<FilterApplied> = []
  for (const filter of FILTER_ORDER) {
    const predicate = keep[filter]
    if (predicate === null) continue
    const next = eligible.filter(predicate)
    if (next.length < eligible.length) filtersApplied.push({ filter, removed: eligible.length - next.length })
    eligible = next
  }
  return { eligible, filtersApplied }
}
