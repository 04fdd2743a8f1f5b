/**
 * Laws of `rank` over random catalogs (fixture benchmarks and taxonomy) and over the shipped catalog, checked
 * against a small independent oracle: its own filter predicates, weight mixing, expected quality and cost.
 */
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { buildCatalog, type Catalog, type CatalogModel } from "../../src/router/Catalog.js"
import type { CatalogFile } from "../../src/router/CatalogSchema.js"
import { FILTER_ORDER } from "../../src/router/Filters.js"
import { rank, type RankInput, type RankOutcome } from "../../src/router/Ranking.js"
import type { Taxonomy } from "../../src/router/Taxonomy.js"
import {
  catalogAndRequestArbitrary,
  catalogFileArbitrary,
  type RandomRequest,
  requestArbitrary
} from "./fixtures/CatalogArbitrary.js"
import { fixtureTaxonomy, realCatalog, realTaxonomy } from "./fixtures/RouterFixtures.js"

const inputOf = (catalog: Catalog, taxonomy: Taxonomy, request: RandomRequest): RankInput => ({
  catalog,
  taxonomy,
  ...request,
  topTaskType: request.taskDistribution[0]!.taskType
})

const oracleVolume = (taxonomy: Taxonomy, request: RandomRequest) =>
  request.taskDistribution.reduce(
    (acc, { probability, taskType }) => {
      const type = taxonomy.taskTypesById.get(taskType)!
      return {
        output: acc.output + probability * type.expectedOutputTokens,
        turns: acc.turns + probability * type.expectedTurns
      }
    },
    { output: 0, turns: 0 }
  )

const oracleLatency = (model: CatalogModel, output: number) =>
  model.ttftMs + (output / model.outputTokensPerS) * 1000

/** Each filter of decisions.md as an independent predicate, in order. */
const oracleFilters = (request: RandomRequest, output: number) => {
  const { filters } = request
  const given = (list: ReadonlyArray<string> | null | undefined) =>
    list !== null && list !== undefined && list.length > 0
  return [
    ["include", (m: CatalogModel) => !given(filters.include) || filters.include!.includes(m.entry.id)],
    ["exclude", (m: CatalogModel) => !(filters.exclude ?? []).includes(m.entry.id)],
    ["providers", (m: CatalogModel) =>
      !given(filters.providers) ||
      filters.providers!.some((provider) => provider.toLowerCase() === m.entry.provider.toLowerCase())],
    ["open_weights", (m: CatalogModel) =>
      filters.open_weights == null || m.entry.open_weights === filters.open_weights],
    ["max_price_per_mtok", (m: CatalogModel) =>
      filters.max_price_per_mtok == null || m.entry.blended_price_per_mtok <= filters.max_price_per_mtok],
    ["min_context_tokens", (m: CatalogModel) =>
      filters.min_context_tokens == null || m.entry.context_tokens >= filters.min_context_tokens],
    ["context_fits_input", (m: CatalogModel) => m.entry.context_tokens >= request.inputTokensEst],
    ["modalities", (m: CatalogModel) => (filters.modalities ?? []).every((x) => m.entry.modalities.includes(x))],
    ["max_latency_ms", (m: CatalogModel) =>
      request.maxLatencyMs === null || (!m.latencyEstimated && oracleLatency(m, output) <= request.maxLatencyMs)]
  ] as const
}

const oracle = (catalog: Catalog, taxonomy: Taxonomy, request: RandomRequest) => {
  const { output, turns } = oracleVolume(taxonomy, request)
  let eligible = catalog.models
  const applied: Array<string> = []
  for (const [name, keep] of oracleFilters(request, output)) {
    const next = eligible.filter(keep)
    if (next.length < eligible.length) applied.push(`${name}:${eligible.length - next.length}`)
    eligible = next
  }
  const weights = new Map<number, number>()
  for (const { probability, taskType } of request.taskDistribution) {
    for (const [id, w] of Object.entries(taxonomy.taskTypesById.get(taskType)!.benchmarkWeights)) {
      const index = catalog.benchmarkIndex.get(id)!
      weights.set(index, (weights.get(index) ?? 0) + probability * w)
    }
  }
  const quality = (m: CatalogModel) =>
    [...weights].reduce((sum, [b, w]) => sum + w * (m.measured[b] ? m.values[b]! : 0.75 * m.values[b]!), 0)
  const cost = (m: CatalogModel) =>
    (turns * (request.inputTokensEst * m.entry.price_input_per_mtok +
      output * m.reasoningFactor * m.entry.price_output_per_mtok)) / 1e6
  return { eligible, applied, quality, cost }
}

const applied = (outcome: RankOutcome) => outcome.filtersApplied.map(({ filter, removed }) => `${filter}:${removed}`)

const ranking = (outcome: RankOutcome) => (outcome._tag === "Ranked" ? outcome.ranking : [])

const assertClose = (actual: number, expected: number) =>
  assert.closeTo(actual, expected, Math.abs(expected) * 1e-5 + 1e-12)

describe("rank: laws over random catalogs", () => {
  it("a model removed by a filter never appears", () =>
    fc.assert(fc.property(catalogAndRequestArbitrary, ({ catalog, request }) => {
      const { output } = oracleVolume(fixtureTaxonomy, request)
      const predicates = oracleFilters(request, output)
      for (const entry of ranking(rank(inputOf(catalog, fixtureTaxonomy, request)))) {
        const model = catalog.modelsById.get(entry.id)!
        for (const [name, keep] of predicates) assert.isTrue(keep(model), `${entry.id} passed through ${name}`)
      }
    })))

  it("filters_applied lists, in order, each filter that removed models, with its count", () =>
    fc.assert(fc.property(catalogAndRequestArbitrary, ({ catalog, request }) => {
      const outcome = rank(inputOf(catalog, fixtureTaxonomy, request))
      const expected = oracle(catalog, fixtureTaxonomy, request)
      assert.deepStrictEqual(applied(outcome), expected.applied)
      const order = outcome.filtersApplied.map(({ filter }) => FILTER_ORDER.indexOf(filter))
      assert.deepStrictEqual(order, [...order].sort((a, b) => a - b))
      assert.strictEqual(outcome._tag, expected.eligible.length === 0 ? "NoEligibleModel" : "Ranked")
    })))

  it("at most ten entries (all eligible models up to ten), scores descending", () =>
    fc.assert(fc.property(catalogAndRequestArbitrary, ({
      catalog,
      request
    }) => {
      const entries = ranking(rank(inputOf(catalog, fixtureTaxonomy, request)))
      assert.strictEqual(entries.length, Math.min(10, oracle(catalog, fixtureTaxonomy, request).eligible.length))
      entries.slice(1).forEach((entry, index) => assert.isAtMost(entry.score, entries[index]!.score))
    })))

  it("cost_efficient picks the cheapest model at or above tau", () =>
    fc.assert(fc.property(catalogAndRequestArbitrary, ({
      catalog,
      request
    }) => {
      const outcome = rank(inputOf(catalog, fixtureTaxonomy, { ...request, policy: "cost_efficient" }))
      if (outcome._tag !== "Ranked") return
      const { cost, eligible, quality } = oracle(catalog, fixtureTaxonomy, request)
      const qStar = Math.max(...eligible.map(quality))
      const tau = (0.8 + 0.18 * request.difficulty) * qStar
      const cheapest = Math.min(...eligible.filter((m) => quality(m) >= tau).map(cost))
      assertClose(outcome.threshold!.tau, tau)
      assertClose(outcome.ranking[0]!.estimated_cost_usd, cheapest)
      assert.isAtLeast(outcome.ranking[0]!.expected_quality, outcome.threshold!.tau)
    })))

  it("capability_heavy picks the highest expected quality", () =>
    fc.assert(fc.property(catalogAndRequestArbitrary, ({
      catalog,
      request
    }) => {
      const outcome = rank(inputOf(catalog, fixtureTaxonomy, { ...request, policy: "capability_heavy" }))
      if (outcome._tag !== "Ranked") return
      const { eligible, quality } = oracle(catalog, fixtureTaxonomy, request)
      assertClose(outcome.ranking[0]!.expected_quality, Math.max(...eligible.map(quality)))
    })))

  it("raising a model's price never raises its rank under cost_efficient", () =>
    fc.assert(fc.property(catalogFileArbitrary.chain((file) =>
        fc.tuple(
          fc.constant(file),
          requestArbitrary(file.models.map((model) => model.id)),
          fc.integer({ min: 100, max: 5000 }).map((percent) => percent / 100)
        )
      ), ([file, request, factor]) => {
      const position = (catalog: Catalog, id: string) => {
        const found = ranking(rank(inputOf(catalog, fixtureTaxonomy, { ...request, policy: "cost_efficient" })))
          .findIndex((entry) => entry.id === id)
        return found === -1 ? Number.POSITIVE_INFINITY : found
      }
      const before = buildCatalog(file)
      file.models.forEach((raisedModel, index) => {
        const raised: CatalogFile = {
          ...file,
          models: file.models.map((model, i) =>
            i !== index ? model : {
              ...model,
              price_input_per_mtok: model.price_input_per_mtok * factor,
              price_output_per_mtok: model.price_output_per_mtok * factor,
              blended_price_per_mtok: model.blended_price_per_mtok * factor
            }
          )
        }
        assert.isAtLeast(position(buildCatalog(raised), raisedModel.id), position(before, raisedModel.id), raisedModel.id)
      })
    })))

  it("threshold for balanced and cost_efficient only; low confidence only for domain_skills under 40%", () =>
    fc.assert(fc.property(catalogAndRequestArbitrary, ({ catalog, request }) => {
      const outcome = rank(inputOf(catalog, fixtureTaxonomy, request))
      if (outcome._tag !== "Ranked") return
      const barred = request.policy === "balanced" || request.policy === "cost_efficient"
      assert.strictEqual(outcome.threshold !== null, barred)
      const top = request.taskDistribution[0]!.probability
      assert.strictEqual(outcome.lowConfidence, request.policy === "domain_skills" && top < 0.4)
    })))
})

describe("rank: laws over the shipped catalog", () => {
  const ids = realCatalog.models.map((model) => model.entry.id)
  const types = realTaxonomy.taskTypes.map((type) => type.id)

  it("filters hold, at most ten entries, scores descending", () =>
    fc.assert(fc.property(requestArbitrary(ids, types), (request) => {
      const outcome = rank(inputOf(realCatalog, realTaxonomy, request))
      const expected = oracle(realCatalog, realTaxonomy, request)
      assert.deepStrictEqual(applied(outcome), expected.applied)
      const entries = ranking(outcome)
      const allowed = new Set(expected.eligible.map((model) => model.entry.id))
      assert.strictEqual(entries.length, Math.min(10, allowed.size))
      for (const entry of entries) assert.isTrue(allowed.has(entry.id), entry.id)
      entries.slice(1).forEach((entry, index) => assert.isAtMost(entry.score, entries[index]!.score))
    })))
})
