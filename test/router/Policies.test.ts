import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { readFileSync } from "node:fs"
import { parseCatalog } from "../../src/router/Catalog.js"
import { median } from "../../src/router/CatalogStatistics.js"
import { roundReported } from "../../src/router/Explain.js"
import { logScale, requiredShare } from "../../src/router/Policies.js"
import { balancedWeights, rank, type RankInput } from "../../src/router/Ranking.js"
import { keepTaskTypes } from "../../src/router/TaskMix.js"
import { fixtureInput, fixturePath, fixtureTaxonomy } from "./fixtures/RouterFixtures.js"

/** The fixture plus three clones of atlas: one cheaper blended price, one dearer, one identical (id decides). */
const tiesCatalog = () => {
  const json = JSON.parse(readFileSync(fixturePath("catalog.json"), "utf8"))
  const atlas = json.models[0]
  json.models.push(
    { ...atlas, id: "zz/cheap", blended_price_per_mtok: 3 },
    { ...atlas, id: "aa/pricey", blended_price_per_mtok: 4 },
    { ...atlas, id: "acme/atlas-2" }
  )
  return Effect.runSync(parseCatalog("ties.json", json))
}

const ids = (input: RankInput) => {
  const outcome = rank(input)
  return outcome._tag === "Ranked" ? outcome.ranking.map((entry) => entry.id) : []
}

describe("rank: ties", () => {
  it("equal scores: higher expected quality, then lower blended price, then id", () => {
    const catalog = tiesCatalog()
    assert.deepStrictEqual(ids(fixtureInput({ catalog, policy: "capability_heavy" })).slice(0, 5), [
      "zz/cheap",
      "acme/atlas",
      "acme/atlas-2",
      "aa/pricey",
      "orbit/comet"
    ])
    // comet costs 0.007, the four atlases 0.01 each
    assert.deepStrictEqual(ids(fixtureInput({ catalog, policy: "cost_efficient" })).slice(0, 5), [
      "orbit/comet",
      "zz/cheap",
      "acme/atlas",
      "acme/atlas-2",
      "aa/pricey"
    ])
  })

  it("at most ten entries out of eleven eligible models", () => {
    const json = JSON.parse(readFileSync(fixturePath("catalog.json"), "utf8"))
    for (let copy = 0; copy < 6; copy++) json.models.push({ ...json.models[copy % 5], id: `copy/${copy}` })
    const catalog = Effect.runSync(parseCatalog("eleven.json", json))
    assert.strictEqual(ids(fixtureInput({ catalog, policy: "capability_heavy" })).length, 10)
  })
})

describe("policy building blocks", () => {
  it("r rises linearly from 0.80 to 0.98 and clamps the difficulty", () => {
    assert.deepStrictEqual([requiredShare(0), requiredShare(1), requiredShare(-1), requiredShare(2)], [
      0.8,
      0.98,
      0.8,
      0.98
    ])
    assert.closeTo(requiredShare(0.5), 0.89, 1e-12)
  })

  it("logScale maps the log range of the list onto 0..1, a constant list to 0", () => {
    // ln 0.001 .. ln 0.1 spans 2 decades; 0.01 is halfway
    const [low, middle, high] = logScale([0.001, 0.01, 0.1], 1e-9)
    assert.deepStrictEqual([low, high], [0, 1])
    assert.closeTo(middle!, 0.5, 1e-12)
    assert.deepStrictEqual(logScale([5, 5], 1), [0, 0])
    assert.deepStrictEqual(logScale([0, 1e-9], 1e-9), [0, 0])
  })

  it("balanced weights: the caller's rescaled to sum to 1, all zero or absent gives the latency defaults", () => {
    assert.deepStrictEqual(balancedWeights({ quality: 2, cost: 1, speed: 1 }, "batch"), {
      quality: 0.5,
      cost: 0.25,
      speed: 0.25
    })
    assert.deepStrictEqual(balancedWeights({ quality: 0, cost: 0, speed: 0 }, "interactive"), {
      quality: 0.4,
      cost: 0.25,
      speed: 0.35
    })
    assert.deepStrictEqual(balancedWeights(null, "batch").speed, 0)
  })

  it("task types under 5% are dropped; with none left the top task type counts alone", () => {
    const kept = keepTaskTypes(fixtureTaxonomy, [
      { taskType: "coding.gen", probability: 0.03 },
      { taskType: "math.solve", probability: 0.04 }
    ], "math.solve")
    assert.deepStrictEqual(kept.map(({ probability, type }) => [type.id, probability]), [["math.solve", 1]])
    assert.throws(() => rank(fixtureInput({ topTaskType: "cooking.recipes" })), /Unknown task type "cooking.recipes"/)
  })

  it("median of odd and even lists", () => {
    assert.deepStrictEqual([median([3, 1, 2]), median([4, 1, 3, 2]), median([7])], [2, 2.5, 7])
    assert.isNaN(median([]))
  })

  it("reported doubles keep six significant digits", () => {
    assert.deepStrictEqual([roundReported(0.3163043478), roundReported(-0.02304347826), roundReported(11861.111)], [
      0.316304,
      -0.0230435,
      11861.1
    ])
  })

  it("rounding reported doubles never reorders them", () =>
    fc.assert(fc.property(
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      (a, b) => {
        const [low, high] = a <= b ? [a, b] : [b, a]
        assert.isAtMost(roundReported(low), roundReported(high))
      }
    )))
})
