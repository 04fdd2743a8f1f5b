/**
 * The shape of the benchmark-and-price catalog file (`data/catalog.json`, described in `data/README.md`): every
 * field the service reads, strict on types; fields it does not read are allowed and dropped when decoding. A model
 * entry is the model the catalog route shows (`CatalogModel` of the contract) with the file's checks on its fields,
 * plus the normalized benchmark table the ranking reads.
 */
import { Schema } from "effect"
import { CatalogModel } from "../../schema/RouterResponses.js"
import { ArrayOf, Between, IntAtLeast, NonEmptyString, NonNegative, NonNegativeInt, Positive } from "./DataFile.js"

const Normalized = Between(0, 1)

/** One benchmark of the catalog's top-level `benchmarks` list (its id and display name). */
export const CatalogBenchmark = Schema.Struct({
  id: NonEmptyString,
  name: Schema.String
}).annotate({ identifier: "a benchmark object" })

/** One of a model's three best benchmark placements, as the catalog route shows it. */
const ModelHighlight = Schema.Struct({
  benchmark: Schema.String,
  name: Schema.String,
  value: Schema.Number,
  rank: IntAtLeast(1),
  of: IntAtLeast(1)
}).annotate({ identifier: "a highlight object" })

/** The nine score axes of a model entry; an axis with no benchmark for the model is null. */
const ModelScores = Schema.Struct({
  intelligence: Schema.NullOr(Schema.Number),
  coding: Schema.NullOr(Schema.Number),
  math: Schema.NullOr(Schema.Number),
  reasoning: Schema.NullOr(Schema.Number),
  knowledge: Schema.NullOr(Schema.Number),
  agentic: Schema.NullOr(Schema.Number),
  long_context: Schema.NullOr(Schema.Number),
  instruction_following: Schema.NullOr(Schema.Number),
  multilingual: Schema.NullOr(Schema.Number)
}).annotate({ identifier: "a scores object" })

/**
 * One model configuration of the catalog, with prices in USD per million tokens: the fields the catalog route
 * shows, those with a rule of their own checked by it, and the normalized benchmark table.
 */
export const CatalogModelEntry = Schema.Struct({
  ...CatalogModel.fields,
  id: NonEmptyString,
  provider: NonEmptyString,
  context_tokens: IntAtLeast(1),
  price_input_per_mtok: NonNegative,
  price_output_per_mtok: NonNegative,
  blended_price_per_mtok: NonNegative,
  reasoning_token_factor: Schema.NullOr(Positive),
  scores: ModelScores,
  highlights: Schema.Array(ModelHighlight),
  benchmarks_measured: NonNegativeInt,
  output_tokens_per_s: Schema.NullOr(Positive),
  ttft_ms: Schema.NullOr(NonNegative),
  benchmarks_normalized: Schema.Record(Schema.String, Schema.NullOr(Normalized))
}).annotate({ identifier: "a model object" })

/** A decoded model entry. */
export type CatalogModelEntry = typeof CatalogModelEntry.Type

/** The whole catalog file. */
export const CatalogFile = Schema.Struct({
  as_of: Schema.String,
  benchmarks_as_of: Schema.String,
  source: Schema.String,
  domains: Schema.Array(Schema.String),
  task_types: Schema.Array(Schema.String),
  policies: Schema.Array(Schema.String),
  benchmarks: ArrayOf(CatalogBenchmark, 1),
  models: ArrayOf(CatalogModelEntry, 1)
}).annotate({ identifier: "a catalog object" })

/** A decoded catalog file. */
export type CatalogFile = typeof CatalogFile.Type
