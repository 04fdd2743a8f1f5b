/**
 * The wire views of the loaded data for `GET /v1/router/models` (spec, "Router model catalog") and
 * `GET /v1/router/task-types` (decisions.md, Router). The catalog's `domains` and `task_types` lists are those of
 * the loaded taxonomy, the values `POST /v1/router/select` accepts as `domain` and `task_type`, and `policies` are
 * the router's four; model entries carry the spec's fields (the normalized benchmark table stays internal).
 */
import type { ModelCatalog, TaskTypeListing } from "../../schema/RouterResponses.js"
import { ROUTER_POLICIES } from "./Policies.js"
import type { RouterDataShape } from "./RouterData.js"

/** The catalog as `GET /v1/router/models` returns it. */
export const catalogView = ({ catalog, taxonomy }: RouterDataShape): typeof ModelCatalog.Type => ({
  as_of: catalog.file.as_of,
  benchmarks_as_of: catalog.file.benchmarks_as_of,
  source: catalog.file.source,
  domains: taxonomy.families,
  task_types: taxonomy.taskTypes.map((type) => type.id),
  policies: ROUTER_POLICIES,
  models: catalog.models.map(({ entry: { benchmarks_normalized: _internal, ...shown } }) => shown)
})

/** The taxonomy as `GET /v1/router/task-types` returns it. */
export const taskTypesView = ({ taxonomy }: RouterDataShape): typeof TaskTypeListing.Type => ({
  as_of: taxonomy.file.as_of,
  families: taxonomy.families,
  task_types: taxonomy.taskTypes.map((type) => ({
    id: type.id,
    family: type.family,
    description: type.description,
    benchmark_weights: type.benchmarkWeights,
    expected_output_tokens: type.expectedOutputTokens,
    expected_turns: type.expectedTurns
  }))
})
