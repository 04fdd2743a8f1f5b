import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { loadTaxonomy, parseTaxonomy, TaxonomyInvalid } from "../../src/router/Taxonomy.js"
import { dataPath, fixtureTaxonomy, realCatalog } from "./fixtures/RouterFixtures.js"

type Json = Record<string, any>

const realJson = (): Json => JSON.parse(readFileSync(dataPath("task-types.json"), "utf8"))

const failure = (corrupt: (taxonomy: Json) => void) => {
  const json = realJson()
  corrupt(json)
  return Effect.flip(parseTaxonomy("task-types.json", json, realCatalog))
}

describe("loadTaxonomy", () => {
  it.effect("loads the shipped data/task-types.json against the shipped catalog", () =>
    Effect.gen(function*() {
      const taxonomy = yield* loadTaxonomy(dataPath("task-types.json"), realCatalog)
      assert.strictEqual(taxonomy.taskTypes.length, 33)
      assert.deepStrictEqual(taxonomy.families, [
        "coding",
        "math",
        "reasoning",
        "knowledge",
        "agentic",
        "long_context",
        "writing",
        "multilingual",
        "general"
      ])
      assert.strictEqual(taxonomy.familyDefaults.get("math")?.id, "math.applied_quantitative")
      assert.strictEqual(taxonomy.taskTypesByFamily.get("coding")?.length, 7)
      const generation = taxonomy.taskTypesById.get("coding.code_generation")!
      assert.deepStrictEqual([generation.expectedOutputTokens, generation.expectedTurns], [900, 1])
    }))

  it("keeps the fixture's families and types in file order", () => {
    assert.deepStrictEqual(fixtureTaxonomy.taskTypes.map((type) => type.id), [
      "coding.gen",
      "coding.review",
      "math.solve"
    ])
    assert.strictEqual(fixtureTaxonomy.familyDefaults.get("coding")?.id, "coding.gen")
  })

  it.effect("rejects a weight on a benchmark the catalog does not have", () =>
    Effect.gen(function*() {
      const error = yield* failure((taxonomy) => {
        taxonomy.task_types[0].benchmark_weights.nope = 0
      })
      assert.instanceOf(error, TaxonomyInvalid)
      assert.strictEqual(
        error.message,
        "task-types.json: task type \"coding.code_generation\": field \"benchmark_weights.nope\": " +
          "unknown benchmark id (not in the catalog)"
      )
    }))

  it.effect("rejects weights that do not sum to 1", () =>
    Effect.gen(function*() {
      const error = yield* failure((taxonomy) => {
        taxonomy.task_types[1].benchmark_weights.livebench_coding += 0.5
      })
      assert.strictEqual(
        error.message,
        "task-types.json: task type \"coding.code_editing\": field \"benchmark_weights\": " +
          "weights sum to 1.5, expected 1 (within 0.01)"
      )
    }))

  it.effect("requires a default for every family", () =>
    Effect.gen(function*() {
      const error = yield* failure((taxonomy) => {
        delete taxonomy.family_defaults.math
        taxonomy.task_types.find((type: Json) => type.id === "math.applied_quantitative").default_for_family = false
      })
      assert.strictEqual(
        error.message,
        "task-types.json: field \"family_defaults.math\": is missing: every family needs a default task type"
      )
    }))

  it.effect("allows at most 20 task types per family", () =>
    Effect.gen(function*() {
      const error = yield* failure((taxonomy) => {
        const template = taxonomy.task_types[1]
        for (let copy = 0; copy < 14; copy++) {
          taxonomy.task_types.push({ ...template, id: `coding.copy_${copy}` })
        }
      })
      assert.strictEqual(
        error.message,
        "task-types.json: field \"families[0]\": family \"coding\" has 21 task types, at most 20"
      )
    }))

  it.effect("names the task type and field of a wrong type", () =>
    Effect.gen(function*() {
      const error = yield* failure((taxonomy) => {
        taxonomy.task_types[2].expected_turns = "two"
      })
      assert.strictEqual(
        error.message,
        "task-types.json: task type \"coding.debugging\": field \"expected_turns\": Expected number, actual \"two\""
      )
    }))

  it.effect("rejects a task type of an unknown family and duplicate ids", () =>
    Effect.gen(function*() {
      const error = yield* failure((taxonomy) => {
        taxonomy.task_types[3].family = "cooking"
        taxonomy.task_types[4].id = taxonomy.task_types[0].id
      })
      assert.strictEqual(
        error.message,
        "task-types.json: task type \"coding.agentic_software_engineering\": field \"family\": " +
          "unknown family \"cooking\"; " +
          "task-types.json: task type \"coding.code_generation\": field \"id\": duplicate task type id; " +
          "task-types.json: task type \"coding.code_generation\": field \"default_for_family\": " +
          "is false but family_defaults disagrees"
      )
    }))
})
