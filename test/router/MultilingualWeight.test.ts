/**
 * The language rule's ranking half (decisions.md, Router): a prompt's task decides its weights, and
 * `aa_multilingual` joins them in proportion to the `non_english` facet, at most 0.3 of the vector, the rest
 * renormalized; an English prompt's weights are the task's alone. So a maths proof in Chinese still ranks by maths
 * benchmarks first, with multilingual strength as a tie-breaker of up to 30%.
 */
import { assert, describe, it } from "@effect/vitest"
import { rank } from "../../src/router/Ranking.js"
import { MULTILINGUAL_MAX_SHARE } from "../../src/router/ScoringConstants.js"
import { keepTaskTypes, mixTask, withMultilingual } from "../../src/router/TaskMix.js"
import { fixtureCatalog, fixtureInput, realCatalog, realTaxonomy } from "./fixtures/RouterFixtures.js"

const proofWeights = mixTask(realCatalog, keepTaskTypes(realTaxonomy, [{ taskType: "math.research_proofs", probability: 1 }], "math.research_proofs")).weights
const multilingual = realCatalog.benchmarkIndex.get("aa_multilingual")!
const weightOf = (weights: ReadonlyArray<{ index: number; weight: number }>, index: number) =>
  weights.find((entry) => entry.index === index)?.weight ?? 0
const total = (weights: ReadonlyArray<{ weight: number }>) => weights.reduce((sum, entry) => sum + entry.weight, 0)

describe("aa_multilingual in proportion to non_english", () => {
  it("adds 0.3 x the facet to aa_multilingual and scales the task's weights by the rest", () => {
    assert.strictEqual(weightOf(proofWeights, multilingual), 0, "a proof's own weights have no multilingual benchmark")
    for (const facet of [0.02, 0.5, 0.98, 1]) {
      const joined = withMultilingual(realCatalog, proofWeights, facet)
      const share = MULTILINGUAL_MAX_SHARE * facet
      assert.closeTo(weightOf(joined, multilingual), share, 1e-12)
      assert.closeTo(total(joined), 1, 1e-12)
      for (const { index, weight } of proofWeights) assert.closeTo(weightOf(joined, index), (1 - share) * weight, 1e-12)
    }
  })

  it("leaves the weights alone at 0, for a non-probability, and in a catalog without the benchmark", () => {
    assert.strictEqual(withMultilingual(realCatalog, proofWeights, 0), proofWeights)
    assert.strictEqual(withMultilingual(realCatalog, proofWeights, Number.NaN), proofWeights)
    const fixture = mixTask(fixtureCatalog, [{ type: fixtureInput().taxonomy.taskTypesById.get("coding.gen")!, probability: 1 }]).weights
    assert.strictEqual(withMultilingual(fixtureCatalog, fixture, 1), fixture)
  })

  it("moves a non-English proof's ranking toward multilingual strength, an absent facet not at all", () => {
    const input = {
      ...fixtureInput(),
      catalog: realCatalog,
      taxonomy: realTaxonomy,
      taskDistribution: [{ taskType: "math.research_proofs", probability: 1 }],
      topTaskType: "math.research_proofs",
      policy: "capability_heavy" as const
    }
    const zero = rank({ ...input, nonEnglish: 0 })
    const absent = rank(input)
    const chinese = rank({ ...input, nonEnglish: 0.98 })
    assert.isTrue(zero._tag === "Ranked" && absent._tag === "Ranked" && chinese._tag === "Ranked")
    if (zero._tag !== "Ranked" || absent._tag !== "Ranked" || chinese._tag !== "Ranked") return
    assert.deepStrictEqual(absent.ranking, zero.ranking, "an absent facet counts as 0")
    assert.notInclude(absent.ranking.flatMap((entry) => entry.strengths.map((strength) => strength.benchmark)), "aa_multilingual")
    const strengths = chinese.ranking.flatMap((entry) => entry.strengths.map((strength) => strength.benchmark))
    assert.include(strengths, "aa_multilingual", "the multilingual benchmark now contributes to the scores")
    assert.notDeepEqual(chinese.ranking.map((entry) => entry.expected_quality), absent.ranking.map((entry) => entry.expected_quality))
  })
})
