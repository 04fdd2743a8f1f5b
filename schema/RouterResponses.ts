/**
 * Response shapes of the router routes (spec, "Router select response", "Router model catalog"; decisions.md,
 * Router): the selection with its classification and ranking, the catalog and the task taxonomy. Doubles are
 * reported with six significant digits; `usage` and `cost_micros` are those of the classification run.
 */
import { Schema } from "effect"

/** A whole number of at least 0. */
const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** A label object: the label and every label's probability (a caller-fixed label has probability 1.0). */
export const LabelObject = Schema.Struct({
  label: Schema.String,
  probabilities: Schema.Record(Schema.String, Schema.Finite)
})

/** `classification.task_type`: the most probable type, its family, the five most probable and whether fixed. */
export const TaskTypeClassification = Schema.Struct({
  label: Schema.String,
  family: Schema.String,
  top: Schema.Array(Schema.Struct({ label: Schema.String, probability: Schema.Finite })),
  fixed: Schema.Boolean
})

/** The selection's classification of the task. */
export const Classification = Schema.Struct({
  domain: LabelObject,
  difficulty: LabelObject,
  task_type: TaskTypeClassification,
  facets: Schema.Record(Schema.String, Schema.Finite)
})

/** One ranking entry (spec: all fields required). */
export const RankingEntry = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  provider: Schema.String,
  open_weights: Schema.Boolean,
  score: Schema.Finite,
  blended_price_per_mtok: Schema.Finite,
  domain_score: Schema.Finite,
  expected_quality: Schema.Finite,
  uncertainty: Schema.Finite,
  estimated_cost_usd: Schema.Finite,
  estimated_latency_ms: Schema.Finite,
  latency_estimated: Schema.Boolean,
  strengths: Schema.Array(Schema.Struct({ benchmark: Schema.String, name: Schema.String, contribution: Schema.Finite })),
  weaknesses: Schema.Array(Schema.Struct({ benchmark: Schema.String, name: Schema.String, gap: Schema.Finite })),
  imputed: Schema.Array(Schema.String)
})

/** The `POST /v1/router/select` response. */
export const SelectResponse = Schema.Struct({
  id: Schema.String.annotate({ description: "rtr_ + the classification run's hyphenated uuid" }),
  run_id: Schema.String.annotate({ description: "the classification run, run_ + 32 hex" }),
  policy: Schema.Literals(["balanced", "cost_efficient", "capability_heavy", "domain_skills"]),
  model: Schema.Struct({ id: Schema.String, name: Schema.String, provider: Schema.String, open_weights: Schema.Boolean }),
  classification: Classification,
  ranking: Schema.Array(RankingEntry),
  score_basis: Schema.Literals(["domain", "intelligence", "benchmarks"]),
  difficulty_floor: Schema.NullOr(Schema.Finite),
  threshold: Schema.NullOr(Schema.Struct({ q_star: Schema.Finite, r: Schema.Finite, tau: Schema.Finite })),
  filters_applied: Schema.Array(Schema.Struct({ filter: Schema.String, removed: NonNegativeInt })),
  low_confidence: Schema.Boolean,
  input_tokens_est: NonNegativeInt,
  reason: Schema.String,
  decision_model: Schema.String,
  catalog_as_of: Schema.String,
  benchmarks_as_of: Schema.String,
  usage: Schema.NullOr(Schema.Struct({ input_tokens: NonNegativeInt, output_tokens: NonNegativeInt })),
  cost_micros: Schema.NullOr(NonNegativeInt),
  replayed: Schema.Boolean
}).annotate({ identifier: "RouterSelection" })

/** A selection as the service builds and stores it. */
export type SelectResponse = typeof SelectResponse.Type

/** One model of `GET /v1/router/models` (prices in USD per million tokens). */
export const CatalogModel = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  provider: Schema.String,
  open_weights: Schema.Boolean,
  context_tokens: Schema.Int,
  modalities: Schema.Array(Schema.String),
  price_input_per_mtok: Schema.Finite,
  price_output_per_mtok: Schema.Finite,
  blended_price_per_mtok: Schema.Finite,
  reasoning_token_factor: Schema.NullOr(Schema.Finite),
  scores: Schema.Record(Schema.String, Schema.NullOr(Schema.Finite)).annotate({
    description: "intelligence, coding, math, reasoning, knowledge, agentic, long_context, instruction_following, " +
      "multilingual; null where the model has no benchmark on that axis"
  }),
  domains: Schema.Array(Schema.String),
  highlights: Schema.Array(Schema.Struct({
    benchmark: Schema.String,
    name: Schema.String,
    value: Schema.Finite,
    rank: Schema.Int,
    of: Schema.Int
  })),
  benchmarks_measured: Schema.Int,
  license: Schema.String,
  released: Schema.String,
  output_tokens_per_s: Schema.NullOr(Schema.Finite),
  ttft_ms: Schema.NullOr(Schema.Finite)
})

/** The `GET /v1/router/models` response. */
export const ModelCatalog = Schema.Struct({
  as_of: Schema.String,
  benchmarks_as_of: Schema.String,
  source: Schema.String,
  domains: Schema.Array(Schema.String),
  task_types: Schema.Array(Schema.String),
  policies: Schema.Array(Schema.String),
  models: Schema.Array(CatalogModel)
}).annotate({ identifier: "RouterModelCatalog" })

/** The `GET /v1/router/task-types` response (decisions.md, Router). */
export const TaskTypeListing = Schema.Struct({
  as_of: Schema.String,
  families: Schema.Array(Schema.String),
  task_types: Schema.Array(Schema.Struct({
    id: Schema.String,
    family: Schema.String,
    description: Schema.String,
    benchmark_weights: Schema.Record(Schema.String, Schema.Finite),
    expected_output_tokens: Schema.Finite,
    expected_turns: Schema.Finite
  }))
}).annotate({ identifier: "RouterTaskTypes" })
