import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CatalogInvalid, loadCatalog, parseCatalog } from "../../src/router/Catalog.js"
import { dataPath, fixtureCatalog, realCatalog } from "./fixtures/RouterFixtures.js"

type Json = Record<string, any>

const realJson = (): Json => JSON.parse(readFileSync(dataPath("catalog.json"), "utf8"))

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "router-catalog-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const writeTemp = (name: string, text: string) =>
  Effect.map(tempDir, (dir) => {
    const path = join(dir, name)
    writeFileSync(path, text)
    return path
  })

const corruptedFailure = (corrupt: (catalog: Json) => void) =>
  Effect.gen(function*() {
    const catalog = realJson()
    corrupt(catalog)
    const path = yield* writeTemp("catalog.json", JSON.stringify(catalog))
    const error = yield* Effect.flip(loadCatalog(path))
    return { path, error }
  })

describe("loadCatalog", () => {
  it.effect("loads the shipped data/catalog.json", () =>
    Effect.gen(function*() {
      const catalog = yield* loadCatalog(dataPath("catalog.json"))
      assert.strictEqual(catalog.models.length, 67)
      assert.strictEqual(catalog.benchmarks.length, 35)
      assert.strictEqual(catalog.file.as_of, "2026-08-22")
      assert.strictEqual(catalog.modelsById.get("openai/gpt-5.6-sol")?.entry.price_input_per_mtok, 5)
    }))

  it("precomputes the medians of the shipped catalog (checked against the data with an independent script)", () => {
    assert.strictEqual(realCatalog.medians.outputTokensPerS, 93.8)
    assert.strictEqual(realCatalog.medians.ttftMs, 23171)
    assert.strictEqual(realCatalog.medians.reasoningFactor.reasoning, 13.73)
    assert.strictEqual(realCatalog.medians.reasoningFactor.standard, 1)
  })

  it("imputes a missing benchmark from the model's mean ratio to the catalog means", () => {
    const sol = realCatalog.modelsById.get("openai/gpt-5.6-sol")!
    const apex = realCatalog.benchmarkIndex.get("aa_apex_agents")!
    assert.isFalse(sol.measured[apex])
    assert.closeTo(realCatalog.benchmarkMeans[apex]!, 0.509096, 1e-6)
    assert.closeTo(sol.values[apex]!, 0.7280761239, 1e-9)
  })

  it("replaces a null reasoning factor by the reasoning median and a missing speed by the catalog medians", () => {
    const codex = realCatalog.modelsById.get("openai/gpt-5.3-codex")!
    assert.isTrue(codex.reasoning)
    assert.isTrue(codex.reasoningFactorImputed)
    assert.strictEqual(codex.reasoningFactor, 13.73)
    const gemma = realCatalog.modelsById.get("google/gemma-4-26b-a4b")!
    assert.isTrue(gemma.latencyEstimated)
    assert.strictEqual(gemma.outputTokensPerS, 93.8)
    assert.strictEqual(gemma.ttftMs, 23171)
    const mini = realCatalog.modelsById.get("openai/gpt-4o-mini")!
    assert.isFalse(mini.reasoning)
    assert.strictEqual(mini.reasoningFactor, 1)
  })

  it.effect("names the file, the model and the field of a wrong type", () =>
    Effect.gen(function*() {
      const { error, path } = yield* corruptedFailure((catalog) => {
        catalog.models[0].price_input_per_mtok = "x"
      })
      assert.instanceOf(error, CatalogInvalid)
      assert.strictEqual(
        error.message,
        `${path}: model "openai/gpt-5.6-sol": field "price_input_per_mtok": Expected number, actual "x"`
      )
    }))

  it.effect("names a nested field and reports several problems", () =>
    Effect.gen(function*() {
      const { error, path } = yield* corruptedFailure((catalog) => {
        catalog.models[1].benchmarks_normalized.aa_hle = 1.5
        catalog.models[2].scores.coding = "high"
        delete catalog.models[3].ttft_ms
      })
      assert.strictEqual(
        error.message,
        [
          `${path}: model "openai/gpt-5.6-terra": field "benchmarks_normalized.aa_hle": ` +
          "Expected a number between 0 and 1, actual 1.5",
          `${path}: model "openai/gpt-5.6-luna": field "scores.coding": Expected number, actual "high"`,
          `${path}: model "openai/gpt-5.5": field "ttft_ms": is missing`
        ].join("; ")
      )
    }))

  it.effect("rejects negative prices and a context below 1", () =>
    Effect.gen(function*() {
      const { error, path } = yield* corruptedFailure((catalog) => {
        catalog.models[0].price_output_per_mtok = -1
        catalog.models[0].context_tokens = 0
      })
      assert.strictEqual(
        error.message,
        `${path}: model "openai/gpt-5.6-sol": field "context_tokens": Expected a number greater than or equal to 1, ` +
          `actual 0; ${path}: model "openai/gpt-5.6-sol": field "price_output_per_mtok": ` +
          "Expected a non-negative number, actual -1"
      )
    }))

  it.effect("rejects duplicate model ids and unknown benchmark ids", () =>
    Effect.gen(function*() {
      const { error, path } = yield* corruptedFailure((catalog) => {
        catalog.models[1].id = catalog.models[0].id
        catalog.models[2].benchmarks_normalized.made_up = 0.5
      })
      assert.strictEqual(
        error.message,
        `${path}: model "openai/gpt-5.6-sol": field "id": duplicate model id, first used by model #1; ` +
          `${path}: model "openai/gpt-5.6-luna": field "benchmarks_normalized.made_up": ` +
          "unknown benchmark id (not in the top-level benchmarks)"
      )
    }))

  it.effect("names a top-level field", () =>
    Effect.gen(function*() {
      const { error, path } = yield* corruptedFailure((catalog) => {
        catalog.as_of = 20260822
      })
      assert.strictEqual(error.message, `${path}: field "as_of": Expected string, actual 20260822`)
    }))

  it.effect("fails on a file that is not JSON", () =>
    Effect.gen(function*() {
      const path = yield* writeTemp("broken.json", "{ \"models\": [")
      const error = yield* Effect.flip(loadCatalog(path))
      assert.isTrue(error.message.startsWith(`${path}: not valid JSON (`), error.message)
    }))

  it.effect("fails on a missing file", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(loadCatalog("/nonexistent/catalog.json"))
      assert.isTrue(error.message.startsWith("/nonexistent/catalog.json: cannot read the file ("), error.message)
    }))

  it.effect("requires a measured speed somewhere, since its median replaces missing ones", () =>
    Effect.gen(function*() {
      const catalog = realJson()
      for (const model of catalog.models) model.output_tokens_per_s = null
      const error = yield* Effect.flip(parseCatalog("memory.json", catalog))
      assert.strictEqual(
        error.message,
        "memory.json: no model has a measured output_tokens_per_s (its median replaces a missing one)"
      )
    }))
})

describe("fixture catalog statistics (by hand)", () => {
  it("catalog means over measured values", () => {
    // bench_code: (1.0 + 0.6 + 0.9 + 0.5) / 4 = 0.75; bench_math: (0.8 + 1.0 + 0.4 + 0.6) / 4 = 0.7;
    // bench_chat: (0.6 + 0.9 + 0.5 + 0.8) / 4 = 0.7
    const [code, math, chat] = fixtureCatalog.benchmarkMeans
    assert.closeTo(code!, 0.75, 1e-12)
    assert.closeTo(math!, 0.7, 1e-12)
    assert.closeTo(chat!, 0.7, 1e-12)
  })

  it("imputed values: mean ratio to the catalog means times the missing benchmark's mean", () => {
    const value = (id: string, index: number) => fixtureCatalog.modelsById.get(id)!.values[index]!
    // bolt math: ratio ((0.6 / 0.75) + (0.9 / 0.7)) / 2 = (0.8 + 1.285714) / 2 = 1.042857; x 0.7 = 0.73
    assert.closeTo(value("acme/bolt", 1), 0.73, 1e-12)
    // comet chat: ((0.9 / 0.75) + (1.0 / 0.7)) / 2 = (1.2 + 1.428571) / 2 = 1.314286; x 0.7 = 0.92
    assert.closeTo(value("orbit/comet", 2), 0.92, 1e-12)
    // echo code: ((0.6 / 0.7) + (0.8 / 0.7)) / 2 = 1.0; x 0.75 = 0.75
    assert.closeTo(value("nova/echo", 0), 0.75, 1e-12)
    assert.deepStrictEqual(fixtureCatalog.modelsById.get("acme/bolt")!.measured, [true, false, true])
  })

  it("medians: speed (80 + 100) / 2 = 90, ttft (500 + 1000) / 2 = 750, reasoning factor (1.5 + 2) / 2 = 1.75", () => {
    assert.strictEqual(fixtureCatalog.medians.outputTokensPerS, 90)
    assert.strictEqual(fixtureCatalog.medians.ttftMs, 750)
    assert.strictEqual(fixtureCatalog.medians.reasoningFactor.reasoning, 1.75)
    assert.strictEqual(fixtureCatalog.medians.reasoningFactor.standard, 1)
    const drift = fixtureCatalog.modelsById.get("orbit/drift")!
    assert.deepStrictEqual(
      [drift.reasoning, drift.reasoningFactor, drift.reasoningFactorImputed, drift.latencyEstimated],
      [true, 1.75, true, true]
    )
  })
})
