/**
 * `GET /v1/router/models` and `GET /v1/router/task-types`: the spec's catalog shape (exactly its model fields, the
 * normalized benchmark table kept internal) and the decisions.md taxonomy shape, both from the loaded files; query
 * strings refused. And the start-up rule: a service pointed at an invalid catalog or task-types file refuses to
 * start, naming the file, the model or task type and the field.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { call, codeOf } from "../support/Api.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerLive } from "../support/TestServer.js"
import { dataPath } from "./fixtures/RouterFixtures.js"

const shippedCatalog = JSON.parse(readFileSync(dataPath("catalog.json"), "utf8"))
const shippedTaxonomy = JSON.parse(readFileSync(dataPath("task-types.json"), "utf8"))

const ModelFields = [
  "benchmarks_measured", "blended_price_per_mtok", "context_tokens", "domains", "highlights", "id", "license",
  "modalities", "name", "open_weights", "output_tokens_per_s", "price_input_per_mtok", "price_output_per_mtok",
  "provider", "reasoning_token_factor", "released", "scores", "ttft_ms"
]

const writeTemp = (name: string, value: unknown): string => {
  const path = join(mkdtempSync(join(tmpdir(), "arbiter-router-")), name)
  writeFileSync(path, JSON.stringify(value))
  return path
}

layer(TestServerLive(), { excludeTestServices: true, timeout: "120 seconds" })("router catalog routes", (it) => {
  describe("GET /v1/router/models > 200", () => {
    it.effect("the catalog with its snapshot dates, vocabularies and every model with exactly the spec's fields", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        const response = yield* call("GET", "/v1/router/models", { secret })
        assert.strictEqual(response.status, 200)
        const catalog = response.json()
        assert.deepStrictEqual(Object.keys(catalog).sort(), ["as_of", "benchmarks_as_of", "domains", "models", "policies", "source", "task_types"])
        assert.strictEqual(catalog.as_of, shippedCatalog.as_of)
        assert.strictEqual(catalog.benchmarks_as_of, shippedCatalog.benchmarks_as_of)
        assert.strictEqual(catalog.source, shippedCatalog.source)
        assert.deepStrictEqual(catalog.domains, shippedTaxonomy.families)
        assert.deepStrictEqual(catalog.task_types, shippedTaxonomy.task_types.map((type: any) => type.id))
        assert.deepStrictEqual(catalog.policies, ["balanced", "cost_efficient", "capability_heavy", "domain_skills"])
        assert.strictEqual(catalog.models.length, shippedCatalog.models.length)
        catalog.models.forEach((model: any, index: number) => {
          assert.deepStrictEqual(Object.keys(model).sort(), ModelFields, model.id)
          const shipped = shippedCatalog.models[index]
          for (const field of ModelFields) assert.deepStrictEqual(model[field], shipped[field], `${model.id}.${field}`)
        })
      }))
  })

  describe("GET /v1/router/task-types > 200", () => {
    it.effect("families and every task type with its benchmark weights, answer tokens and turns", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        const response = yield* call("GET", "/v1/router/task-types", { secret })
        assert.strictEqual(response.status, 200)
        const listing = response.json()
        assert.deepStrictEqual(Object.keys(listing).sort(), ["as_of", "families", "task_types"])
        assert.strictEqual(listing.as_of, shippedTaxonomy.as_of)
        assert.deepStrictEqual(listing.families, shippedTaxonomy.families)
        assert.deepStrictEqual(
          listing.task_types,
          shippedTaxonomy.task_types.map((type: any) => ({
            id: type.id,
            family: type.family,
            description: type.description,
            benchmark_weights: type.benchmark_weights,
            expected_output_tokens: type.expected_output_tokens,
            expected_turns: type.expected_turns
          }))
        )
      }))
  })

  describe("GET /v1/router/* > 400 invalid_body", () => {
    it.effect("a query parameter is refused in the JSON style", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        for (const path of ["/v1/router/models?provider=openai", "/v1/router/task-types?family=coding"]) {
          const response = yield* call("GET", path, { secret })
          assert.strictEqual(response.status, 400, path)
          assert.strictEqual(codeOf(response), "invalid_body", path)
        }
      }))
  })
})

describe("start-up with invalid router data", () => {
  const startFails = (overrides: { routerCatalogPath?: string; routerTaskTypesPath?: string }) =>
    Effect.scoped(Effect.flip(Layer.build(TestServerLive(overrides)))).pipe(Effect.map((error) => String((error as any).message)))

  it.effect("a bad model field stops the server, naming the file, the model and the field", () =>
    Effect.gen(function*() {
      const broken = structuredClone(shippedCatalog)
      broken.models[3].price_input_per_mtok = "cheap"
      const path = writeTemp("catalog.json", broken)
      const message = yield* startFails({ routerCatalogPath: path })
      assert.include(message, path)
      assert.include(message, `model "${broken.models[3].id}"`)
      assert.include(message, `field "price_input_per_mtok"`)
    }), 60_000)

  it.effect("a task type weighting an unknown benchmark stops the server, naming the task type and the field", () =>
    Effect.gen(function*() {
      const broken = structuredClone(shippedTaxonomy)
      broken.task_types[1].benchmark_weights = { ...broken.task_types[1].benchmark_weights, made_up_bench: 0 }
      const path = writeTemp("task-types.json", broken)
      const message = yield* startFails({ routerTaskTypesPath: path })
      assert.include(message, path)
      assert.include(message, `task type "${broken.task_types[1].id}"`)
      assert.include(message, "made_up_bench")
    }), 60_000)
})
