/**
 * Every catalog filter through `POST /v1/router/select` (the built-in local model classifies): each alone removes
 * exactly the models it should, reports itself in `filters_applied` with the count it removed, and lets no removed
 * model into the ranking; several together apply in the fixed order.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { estimateLatencyMs } from "../../src/router/Estimates.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerLive } from "../support/TestServer.js"
import { realCatalog, realTaxonomy } from "./fixtures/RouterFixtures.js"
import { postSelect } from "./fixtures/Select.js"

const models = realCatalog.models.map((model) => model.entry)
const task = { prompt: "Summarize this meeting transcript into five bullet points.", policy: "capability_heavy" }

const select = (body: Record<string, unknown>) =>
  Effect.gen(function*() {
    const { secret } = yield* seedOrganization()
    const response = yield* postSelect(secret, { ...task, ...body })
    assert.strictEqual(response.status, 200, response.text)
    return response.json()
  })

/** Asserts a one-filter selection: only `kept` ids may rank, and the filter reports what it removed. */
const expectFilter = (body: Record<string, unknown>, filter: string, kept: (id: string) => boolean) =>
  Effect.gen(function*() {
    const selection = yield* select(body)
    const removed = models.filter((model) => !kept(model.id)).length
    assert.isAbove(removed, 0, `${filter} must remove something in this case`)
    assert.deepStrictEqual(selection.filters_applied, [{ filter, removed }])
    assert.isAbove(selection.ranking.length, 0)
    for (const entry of selection.ranking) assert.isTrue(kept(entry.id), `${entry.id} should have been filtered by ${filter}`)
    assert.strictEqual(selection.model.id, selection.ranking[0].id)
    return selection
  })

const byId = (predicate: (model: (typeof models)[number]) => boolean) => {
  const ids = new Set(models.filter(predicate).map((model) => model.id))
  return (id: string) => ids.has(id)
}

layer(TestServerLive(), { excludeTestServices: true, timeout: "120 seconds" })("router select filters", (it) => {
  describe("POST /v1/router/select > 200 with one filter", () => {
    it.effect("include keeps only the listed ids", () =>
      expectFilter({ models: { include: ["anthropic/claude-opus-4.6", "openai/gpt-4o-mini"] } }, "include", (id) =>
        id === "anthropic/claude-opus-4.6" || id === "openai/gpt-4o-mini"))

    it.effect("exclude drops the listed ids, the best model included", () =>
      Effect.gen(function*() {
        const best = (yield* select({})).model.id
        yield* expectFilter({ models: { exclude: [best] } }, "exclude", (id) => id !== best)
      }))

    it.effect("providers compares case-insensitively", () =>
      expectFilter({ models: { providers: ["Google", "ANTHROPIC"] } }, "providers", byId((m) => ["google", "anthropic"].includes(m.provider))))

    it.effect("open_weights true keeps open models, false closed ones", () =>
      Effect.gen(function*() {
        yield* expectFilter({ models: { open_weights: true } }, "open_weights", byId((m) => m.open_weights))
        yield* expectFilter({ models: { open_weights: false } }, "open_weights", byId((m) => !m.open_weights))
      }))

    it.effect("max_price_per_mtok bounds the blended price, bound included", () =>
      expectFilter({ models: { max_price_per_mtok: 1.125 } }, "max_price_per_mtok", byId((m) => m.blended_price_per_mtok <= 1.125)))

    it.effect("min_context_tokens keeps models with at least that context", () =>
      expectFilter({ models: { min_context_tokens: 1_000_000 } }, "min_context_tokens", byId((m) => m.context_tokens >= 1_000_000)))

    it.effect("context_fits_input drops models whose context cannot hold input_tokens_est", () =>
      Effect.gen(function*() {
        const prompt = "Answer the question at the end of these notes. " + "lorem ipsum dolor ".repeat(34_000)
        const selection = yield* expectFilter({ prompt }, "context_fits_input", byId((m) => m.context_tokens >= Math.ceil(prompt.length / 4)))
        assert.strictEqual(selection.input_tokens_est, Math.ceil(prompt.length / 4))
      }))

    it.effect("modalities requires every listed modality", () =>
      expectFilter({ models: { modalities: ["image", "audio"] } }, "modalities", byId((m) => m.modalities.includes("image") && m.modalities.includes("audio"))))

    it.effect("max_latency_ms drops slower models and those without a measured speed", () =>
      Effect.gen(function*() {
        const bound = 20_000
        // A fixed task type makes the expected answer length exact: writing.summarization's.
        const answerTokens = realTaxonomy.taskTypesById.get("writing.summarization")!.expectedOutputTokens
        const fast = new Set(realCatalog.models
          .filter((model) => !model.latencyEstimated && estimateLatencyMs(model, answerTokens) <= bound)
          .map((model) => model.entry.id))
        const selection = yield* expectFilter({ task_type: "writing.summarization", max_latency_ms: bound }, "max_latency_ms", (id) => fast.has(id))
        for (const entry of selection.ranking) assert.isAtMost(entry.estimated_latency_ms, bound)
      }))
  })

  describe("POST /v1/router/select > 200 with filters together", () => {
    it.effect("apply in the fixed order, each reporting what it removed from what the previous ones left", () =>
      Effect.gen(function*() {
        const selection = yield* select({
          models: { exclude: ["openai/gpt-4o-mini"], providers: ["openai", "google"], open_weights: false, modalities: ["image"] }
        })
        const afterExclude = models.filter((m) => m.id !== "openai/gpt-4o-mini")
        const afterProviders = afterExclude.filter((m) => ["openai", "google"].includes(m.provider))
        const afterOpen = afterProviders.filter((m) => !m.open_weights)
        const afterModalities = afterOpen.filter((m) => m.modalities.includes("image"))
        const expected = [
          { filter: "exclude", removed: models.length - afterExclude.length },
          { filter: "providers", removed: afterExclude.length - afterProviders.length },
          { filter: "open_weights", removed: afterProviders.length - afterOpen.length },
          { filter: "modalities", removed: afterOpen.length - afterModalities.length }
        ].filter((applied) => applied.removed > 0)
        assert.deepStrictEqual(selection.filters_applied, expected)
        const allowed = new Set(afterModalities.map((m) => m.id))
        for (const entry of selection.ranking) assert.isTrue(allowed.has(entry.id), entry.id)
        assert.strictEqual(selection.ranking.length, Math.min(10, allowed.size))
      }))

    it.effect("an empty models object or empty lists filter nothing", () =>
      Effect.gen(function*() {
        const selection = yield* select({ models: { include: [], providers: [], modalities: [] } })
        assert.deepStrictEqual(selection.filters_applied, [])
        assert.strictEqual(selection.ranking.length, 10)
      }))
  })
})
