/**
 * The loaded benchmark-and-price catalog: the decoded file plus what ranking needs, computed once per load
 * (benchmark means, every missing benchmark imputed, medians for missing speed, first-token time and
 * reasoning_token_factor). A model is "reasoning" when its factor is above 1 or null: every null factor in the data
 * belongs to a reasoning model whose whole-suite count is missing (data README, section 3), so a null takes the
 * median of the reasoning models. Loading fails with a message naming the file, the model and the field.
 */
import { Data, Effect, Result } from "effect"
import { CatalogFile, type CatalogModelEntry } from "./CatalogSchema.js"
import {
  benchmarkMeans,
  type CatalogMedians,
  catalogMedians,
  imputeBenchmarks,
  isReasoningModel
} from "./CatalogStatistics.js"
import { decodeDataFile, type ItemList, joinIssues, locateIssue, readJsonFile } from "./DataFile.js"

/** The catalog file is missing, unreadable or invalid; a start-up error whose message locates the problem. */
export class CatalogInvalid extends Data.TaggedError("CatalogInvalid")<{ readonly message: string }> {}

/** A catalog model with its ranking inputs resolved: benchmark values (measured or imputed), factor and speed. */
export interface CatalogModel {
  readonly entry: CatalogModelEntry
  readonly values: ReadonlyArray<number>
  readonly measured: ReadonlyArray<boolean>
  readonly reasoning: boolean
  readonly reasoningFactor: number
  readonly reasoningFactorImputed: boolean
  readonly outputTokensPerS: number
  readonly ttftMs: number
  readonly latencyEstimated: boolean
}

/** The catalog as ranking reads it; `values` and `benchmarkMeans` are indexed like `benchmarks`. */
export interface Catalog {
  readonly file: CatalogFile
  readonly benchmarks: ReadonlyArray<{ readonly id: string; readonly name: string }>
  readonly benchmarkIndex: ReadonlyMap<string, number>
  readonly benchmarkMeans: ReadonlyArray<number | null>
  readonly medians: CatalogMedians
  readonly models: ReadonlyArray<CatalogModel>
  readonly modelsById: ReadonlyMap<string, CatalogModel>
}

const MODELS: ItemList = { list: "models", noun: "model" }

/** The semantic problems of a decoded catalog (unique ids, known benchmarks, figures the medians need). */
export const catalogIssues = (file: string, json: unknown, catalog: CatalogFile): ReadonlyArray<string> => {
  const issues: Array<string> = []
  const at = (path: ReadonlyArray<PropertyKey>, message: string) =>
    issues.push(locateIssue(file, json, MODELS, path, message))
  const benchmarkIds = new Set<string>()
  catalog.benchmarks.forEach((benchmark, index) => {
    if (benchmarkIds.has(benchmark.id)) at(["benchmarks", index, "id"], `duplicate benchmark id "${benchmark.id}"`)
    benchmarkIds.add(benchmark.id)
  })
  const modelIds = new Map<string, number>()
  catalog.models.forEach((model, index) => {
    const first = modelIds.get(model.id)
    if (first !== undefined) at(["models", index, "id"], `duplicate model id, first used by model #${first + 1}`)
    else modelIds.set(model.id, index)
    for (const key of Object.keys(model.benchmarks_normalized)) {
      if (!benchmarkIds.has(key)) {
        at(["models", index, "benchmarks_normalized", key], "unknown benchmark id (not in the top-level benchmarks)")
      }
    }
  })
  if (catalog.models.every((model) => model.output_tokens_per_s === null)) {
    at([], "no model has a measured output_tokens_per_s (its median replaces a missing one)")
  }
  if (catalog.models.every((model) => model.ttft_ms === null)) {
    at([], "no model has a measured ttft_ms (its median replaces a missing one)")
  }
  if (catalog.models.every((model) => model.reasoning_token_factor === null)) {
    at([], "no model has a reasoning_token_factor (its median replaces a missing one)")
  }
  return issues
}

/** Builds the ranking view of a valid catalog file (pure; `catalogIssues` must be empty). */
export const buildCatalog = (file: CatalogFile): Catalog => {
  const benchmarks = file.benchmarks.map(({ id, name }) => ({ id, name }))
  const ids = benchmarks.map((benchmark) => benchmark.id)
  const means = benchmarkMeans(ids, file.models)
  const medians = catalogMedians(file.models)
  const models = file.models.map((entry): CatalogModel => {
    const { measured, values } = imputeBenchmarks(ids, means, entry)
    const reasoning = isReasoningModel(entry)
    const factor = entry.reasoning_token_factor
    return {
      entry,
      values,
      measured,
      reasoning,
      reasoningFactor: factor ?? (reasoning ? medians.reasoningFactor.reasoning : medians.reasoningFactor.standard),
      reasoningFactorImputed: factor === null,
      outputTokensPerS: entry.output_tokens_per_s ?? medians.outputTokensPerS,
      ttftMs: entry.ttft_ms ?? medians.ttftMs,
      latencyEstimated: entry.output_tokens_per_s === null || entry.ttft_ms === null
    }
  })
  return {
    file,
    benchmarks,
    benchmarkIndex: new Map(ids.map((id, index) => [id, index])),
    benchmarkMeans: means,
    medians,
    models,
    modelsById: new Map(models.map((model) => [model.entry.id, model]))
  }
}

/** Decodes, checks and builds a catalog from parsed JSON; `file` names the source in messages. */
export const parseCatalog = (file: string, json: unknown): Effect.Effect<Catalog, CatalogInvalid> =>
  Result.match(decodeDataFile(CatalogFile, file, json, MODELS), {
    onFailure: (message) => Effect.fail(new CatalogInvalid({ message })),
    onSuccess: (decoded) => {
      const issues = catalogIssues(file, json, decoded)
      return issues.length > 0
        ? Effect.fail(new CatalogInvalid({ message: joinIssues(issues) }))
        : Effect.succeed(buildCatalog(decoded))
    }
  })

/** Reads, validates and builds the catalog file at `path`. */
export const loadCatalog = (path: string): Effect.Effect<Catalog, CatalogInvalid> =>
  readJsonFile(path).pipe(
    Effect.mapError((message) => new CatalogInvalid({ message })),
    Effect.flatMap((json) => parseCatalog(path, json))
  )
