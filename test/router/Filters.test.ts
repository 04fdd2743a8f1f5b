/**
 * The filters on the fixture catalog (figures in Ranking.test.ts): atlas (acme, closed, 200k, text+image, 3.5),
 * bolt (acme, closed, 32k, text, 0.75), comet (orbit, open, 128k, text+image, 1.75), drift (orbit, open, 64k,
 * text, 0.15, no speed), echo (nova, closed, 1M, text+image+audio, 6).
 */
import { assert, describe, it } from "@effect/vitest"
import { rank, type RankInput } from "../../src/router/Ranking.js"
import { fixtureInput } from "./fixtures/RouterFixtures.js"

const outcome = (overrides: Partial<RankInput>) => {
  const result = rank(fixtureInput({ policy: "capability_heavy", ...overrides }))
  return {
    filters: result.filtersApplied.map(({ filter, removed }) => `${filter}:${removed}`),
    ids: result._tag === "Ranked" ? result.ranking.map((entry) => entry.id).sort() : null
  }
}

describe("rank: filters", () => {
  it("reports only the filters that removed a model, in order", () => {
    assert.deepStrictEqual(
      outcome({ filters: { exclude: ["acme/bolt"], providers: ["ORBIT", "acme"], max_price_per_mtok: 5 } }),
      { filters: ["exclude:1", "providers:1"], ids: ["acme/atlas", "orbit/comet", "orbit/drift"] }
    )
  })

  it("include keeps only the listed ids; an empty list is not set", () => {
    assert.deepStrictEqual(outcome({ filters: { include: ["nova/echo", "acme/atlas"] } }), {
      filters: ["include:3"],
      ids: ["acme/atlas", "nova/echo"]
    })
    assert.deepStrictEqual(outcome({ filters: { include: [] } }).filters, [])
  })

  it("open_weights true keeps open models, false closed ones", () => {
    assert.deepStrictEqual(outcome({ filters: { open_weights: true } }).ids, ["orbit/comet", "orbit/drift"])
    assert.deepStrictEqual(outcome({ filters: { open_weights: false } }), {
      filters: ["open_weights:2"],
      ids: ["acme/atlas", "acme/bolt", "nova/echo"]
    })
  })

  it("max_price_per_mtok compares the blended price, bound included", () => {
    assert.deepStrictEqual(outcome({ filters: { max_price_per_mtok: 1.75 } }), {
      filters: ["max_price_per_mtok:2"],
      ids: ["acme/bolt", "orbit/comet", "orbit/drift"]
    })
  })

  it("min_context_tokens runs before context_fits_input, which reports only its own removals", () => {
    assert.deepStrictEqual(outcome({ inputTokensEst: 100_000 }), {
      filters: ["context_fits_input:2"],
      ids: ["acme/atlas", "nova/echo", "orbit/comet"]
    })
    assert.deepStrictEqual(outcome({ inputTokensEst: 100_000, filters: { min_context_tokens: 150_000 } }), {
      filters: ["min_context_tokens:3"],
      ids: ["acme/atlas", "nova/echo"]
    })
    assert.deepStrictEqual(outcome({ inputTokensEst: 128_000 }).ids, ["acme/atlas", "nova/echo", "orbit/comet"])
  })

  it("modalities requires every listed modality", () => {
    assert.deepStrictEqual(outcome({ filters: { modalities: ["image"] } }).filters, ["modalities:2"])
    assert.deepStrictEqual(outcome({ filters: { modalities: ["audio", "image"] } }), {
      filters: ["modalities:4"],
      ids: ["nova/echo"]
    })
  })

  it("max_latency_ms drops slower models and those without a measured speed", () => {
    // O = 1000: atlas 10500, bolt 5200, comet 22000, drift estimated, echo 13500
    assert.deepStrictEqual(outcome({ maxLatencyMs: 12_000 }), {
      filters: ["max_latency_ms:3"],
      ids: ["acme/atlas", "acme/bolt"]
    })
    assert.deepStrictEqual(outcome({ maxLatencyMs: 10_500 }).ids, ["acme/atlas", "acme/bolt"])
  })

  it("no model left is NoEligibleModel with the filters that removed them", () => {
    const result = rank(fixtureInput({ filters: { include: ["orbit/drift"], open_weights: false } }))
    assert.deepStrictEqual(result, {
      _tag: "NoEligibleModel",
      filtersApplied: [{ filter: "include", removed: 4 }, { filter: "open_weights", removed: 1 }]
    })
  })
})
