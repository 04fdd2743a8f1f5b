/**
 * Worked examples on the fixture catalog, every figure computed by hand.
 *
 * Fixture (effective value = measured value, or 0.75 x imputed value; imputed values from Catalog.test.ts):
 *   model        code   math          chat          in/out $  f          speed  ttft  context  blended
 *   acme/atlas   1.0    0.8           0.6           2 / 8     1          100    500   200k     3.5
 *   acme/bolt    0.6    0.73 -> .5475 0.9           0.5 / 1.5 1          200    200   32k      0.75
 *   orbit/comet  0.9    1.0           0.92 -> .69   1 / 4     1.5        50     2000  128k     1.75
 *   orbit/drift  0.5    0.4           0.5           0.1 / 0.3 null->1.75 median 90 / 750    64k      0.15
 *   nova/echo    .75->.5625 0.6       0.8           3 / 15    2          80     1000  1M       6
 *
 * Example 1: coding.gen alone (W code 0.8, chat 0.2; O = 1000, T = 1), 1,000 input tokens, difficulty 0.5.
 *   q:    atlas 0.8*1.0 + 0.2*0.6 = 0.92   bolt 0.48 + 0.18 = 0.66   comet 0.72 + 0.2*0.69 = 0.858
 *         drift 0.4 + 0.1 = 0.5          echo 0.8*0.5625 + 0.16 = 0.61
 *   cost: atlas (1000*2 + 1000*1*8)/1e6 = 0.01     bolt (500 + 1500)/1e6 = 0.002
 *         comet (1000 + 1000*1.5*4)/1e6 = 0.007    drift (100 + 1000*1.75*0.3)/1e6 = 0.000625
 *         echo (3000 + 1000*2*15)/1e6 = 0.033
 *   latency: atlas 500 + 1000/100*1000 = 10500   bolt 200 + 5000 = 5200   comet 2000 + 20000 = 22000
 *            drift 750 + 1000/90*1000 = 11861.1 (estimated)   echo 1000 + 12500 = 13500
 *   bar: q_star 0.92, r = 0.80 + 0.18*0.5 = 0.89, tau = 0.89*0.92 = 0.8188: atlas and comet are above.
 */
import { assert, describe, it } from "@effect/vitest"
import { rank, type RankInput, type RankOutcome } from "../../src/router/Ranking.js"
import { fixtureInput } from "./fixtures/RouterFixtures.js"

const ranked = (input: RankInput) => {
  const outcome: RankOutcome = rank(input)
  if (outcome._tag !== "Ranked") throw new Error(`expected a ranking, got ${outcome._tag}`)
  return outcome
}

const idsAndScores = (input: RankInput) => ranked(input).ranking.map((entry) => [entry.id, entry.score])

describe("rank: example 1 (coding.gen, difficulty 0.5)", () => {
  it("capability_heavy: expected quality, best first", () => {
    const outcome = ranked(fixtureInput({ policy: "capability_heavy" }))
    assert.deepStrictEqual(outcome.ranking.map((entry) => [entry.id, entry.score]), [
      ["acme/atlas", 0.92],
      ["orbit/comet", 0.858],
      ["acme/bolt", 0.66],
      ["nova/echo", 0.61],
      ["orbit/drift", 0.5]
    ])
    assert.isNull(outcome.threshold)
    assert.isFalse(outcome.lowConfidence)
    assert.deepStrictEqual(outcome.filtersApplied, [])
  })

  it("cost_efficient: cheapest above the bar, then the rest by expected quality", () => {
    // above: comet -0.007, atlas -0.01; below, from the lowest score above: -0.01 - (0.8188 - q)
    // bolt -0.01 - 0.1588 = -0.1688, echo -0.01 - 0.2088 = -0.2188, drift -0.01 - 0.3188 = -0.3288
    const outcome = ranked(fixtureInput({ policy: "cost_efficient" }))
    assert.deepStrictEqual(outcome.ranking.map((entry) => [entry.id, entry.score]), [
      ["orbit/comet", -0.007],
      ["acme/atlas", -0.01],
      ["acme/bolt", -0.1688],
      ["nova/echo", -0.2188],
      ["orbit/drift", -0.3288]
    ])
    assert.deepStrictEqual(outcome.threshold, { q_star: 0.92, r: 0.89, tau: 0.8188 })
    assert.strictEqual(
      outcome.reason,
      "Chose Comet: expected quality 0.86 (bar 0.82 at medium difficulty), estimated $0.00700 and 22.0 s for " +
        "this coding.gen task; cheapest above the bar among 5 eligible models."
    )
  })

  it("balanced, standard (0.5, 0.35, 0.15): comet is cheaper, atlas faster", () => {
    // over {atlas, comet}: c atlas 1, comet 0 (log cost 0.01 vs 0.007); l atlas 0, comet 1 (10500 vs 22000)
    // atlas 0.5*1 - 0.35*1 - 0 = 0.15; comet 0.5*0.858/0.92 - 0 - 0.15*1 = 0.466304 - 0.15 = 0.316304
    // below from 0.15: bolt 0.15 - 0.1588 = -0.0088, echo -0.0588, drift -0.1688
    assert.deepStrictEqual(idsAndScores(fixtureInput({ policy: "balanced", latency: "standard" })), [
      ["orbit/comet", 0.316304],
      ["acme/atlas", 0.15],
      ["acme/bolt", -0.0088],
      ["nova/echo", -0.0588],
      ["orbit/drift", -0.1688]
    ])
  })

  it("balanced, interactive (0.4, 0.25, 0.35): speed flips the choice to atlas", () => {
    // atlas 0.4 - 0.25 = 0.15; comet 0.4*0.932609 - 0.35 = 0.0230435
    // below from 0.0230435: bolt -0.135757, echo -0.185757, drift -0.295757
    assert.deepStrictEqual(idsAndScores(fixtureInput({ policy: "balanced", latency: "interactive" })), [
      ["acme/atlas", 0.15],
      ["orbit/comet", 0.0230435],
      ["acme/bolt", -0.135757],
      ["nova/echo", -0.185757],
      ["orbit/drift", -0.295757]
    ])
  })

  it("balanced, batch (0.5, 0.5, 0) and caller weights {2, 0, 0} rescaled to {1, 0, 0}", () => {
    // batch: atlas 0.5 - 0.5 = 0; comet 0.466304 - 0 = 0.466304
    assert.deepStrictEqual(idsAndScores(fixtureInput({ latency: "batch" })).slice(0, 2), [
      ["orbit/comet", 0.466304],
      ["acme/atlas", 0]
    ])
    // quality only: atlas 1, comet 0.858 / 0.92 = 0.932609
    assert.deepStrictEqual(idsAndScores(fixtureInput({ weights: { quality: 2, cost: 0, speed: 0 } })).slice(0, 2), [
      ["acme/atlas", 1],
      ["orbit/comet", 0.932609]
    ])
  })

  it("entries carry the wire fields with the hand-computed figures", () => {
    const entries = new Map(ranked(fixtureInput({ policy: "capability_heavy" })).ranking.map((e) => [e.id, e]))
    assert.deepStrictEqual(entries.get("acme/atlas"), {
      id: "acme/atlas",
      name: "Atlas",
      provider: "acme",
      open_weights: false,
      score: 0.92,
      blended_price_per_mtok: 3.5,
      domain_score: 0.92,
      expected_quality: 0.92,
      uncertainty: 0,
      estimated_cost_usd: 0.01,
      estimated_latency_ms: 10500,
      latency_estimated: false,
      // contributions 0.8*1.0 and 0.2*0.6; chat trails bolt's 0.9 by 0.2*(0.9 - 0.6) = 0.06
      strengths: [
        { benchmark: "bench_code", name: "Code bench", contribution: 0.8 },
        { benchmark: "bench_chat", name: "Chat bench", contribution: 0.12 }
      ],
      weaknesses: [{ benchmark: "bench_chat", name: "Chat bench", gap: 0.06 }],
      imputed: []
    })
    const comet = entries.get("orbit/comet")!
    // code gap 0.8*(1.0 - 0.9) = 0.08, chat gap 0.2*(0.9 - 0.69) = 0.042
    assert.deepStrictEqual(comet.weaknesses.map((w) => [w.benchmark, w.gap]), [
      ["bench_code", 0.08],
      ["bench_chat", 0.042]
    ])
    assert.deepStrictEqual(comet.strengths.map((s) => s.contribution), [0.72, 0.138])
    assert.deepStrictEqual([comet.uncertainty, comet.estimated_cost_usd, comet.imputed], [0.2, 0.007, ["bench_chat"]])
    const drift = entries.get("orbit/drift")!
    assert.deepStrictEqual(
      [drift.estimated_cost_usd, drift.estimated_latency_ms, drift.latency_estimated, drift.imputed],
      [0.000625, 11861.1, true, ["reasoning_token_factor"]]
    )
    const echo = entries.get("nova/echo")!
    assert.deepStrictEqual([echo.uncertainty, echo.estimated_cost_usd, echo.imputed], [0.8, 0.033, ["bench_code"]])
  })
})

describe("rank: example 2 (math.solve 0.35, coding.gen 0.33, coding.review 0.32)", () => {
  const distribution = [
    { taskType: "math.solve", probability: 0.35 },
    { taskType: "coding.gen", probability: 0.33 },
    { taskType: "coding.review", probability: 0.32 }
  ]
  const input = (policy: RankInput["policy"]) =>
    fixtureInput({ policy, taskDistribution: distribution, topTaskType: "math.solve" })

  it("domain_skills: math.solve alone, low confidence under 40%", () => {
    // q = math effective value: comet 1.0, atlas 0.8, echo 0.6, bolt 0.75*0.73 = 0.5475 (imputed), drift 0.4
    // O = 0.35*2000 + 0.33*1000 + 0.32*500 = 1190; T = 0.35 + 0.33 + 0.32*2 = 1.32
    // comet cost 1.32*(1000*1 + 1190*1.5*4)/1e6 = 1.32*8140/1e6 = 0.0107448; latency 2000 + 1190/50*1000 = 25800
    const outcome = ranked(input("domain_skills"))
    assert.deepStrictEqual(outcome.ranking.map((entry) => [entry.id, entry.expected_quality, entry.uncertainty]), [
      ["orbit/comet", 1, 0],
      ["acme/atlas", 0.8, 0],
      ["nova/echo", 0.6, 0],
      ["acme/bolt", 0.5475, 1],
      ["orbit/drift", 0.4, 0]
    ])
    assert.isTrue(outcome.lowConfidence)
    assert.isNull(outcome.threshold)
    assert.deepStrictEqual(outcome.ranking[3]!.imputed, ["bench_math"])
    assert.strictEqual(
      outcome.reason,
      "Chose Comet: expected quality 1.00 on math.solve alone, estimated $0.0107 and 25.8 s for this task; " +
        "highest on the most probable task type among 5 eligible models " +
        "(low confidence: math.solve has probability 35%)."
    )
  })

  it("capability_heavy mixes the three types", () => {
    // W: code 0.33*0.8 + 0.32*0.5 = 0.424, chat 0.33*0.2 + 0.32*0.5 = 0.226, math 0.35
    // comet 0.424*0.9 + 0.226*0.69 + 0.35*1.0 = 0.3816 + 0.15594 + 0.35 = 0.88754
    // atlas 0.424 + 0.1356 + 0.28 = 0.8396; bolt 0.2544 + 0.2034 + 0.191625 = 0.649425
    // echo 0.2385 + 0.1808 + 0.21 = 0.6293; drift 0.212 + 0.113 + 0.14 = 0.465
    // atlas cost 1.32*(2000 + 1190*8)/1e6 = 1.32*11520/1e6 = 0.0152064
    const outcome = ranked(input("capability_heavy"))
    assert.deepStrictEqual(outcome.ranking.map((entry) => [entry.id, entry.score]), [
      ["orbit/comet", 0.88754],
      ["acme/atlas", 0.8396],
      ["acme/bolt", 0.649425],
      ["nova/echo", 0.6293],
      ["orbit/drift", 0.465]
    ])
    assert.deepStrictEqual(outcome.ranking.map((entry) => entry.uncertainty), [0.226, 0, 0.35, 0.424, 0])
    assert.strictEqual(outcome.ranking[1]!.estimated_cost_usd, 0.0152064)
    assert.isFalse(outcome.lowConfidence)
    assert.include(
      outcome.reason,
      "for this task (mostly math.solve); highest expected quality among 5 eligible models."
    )
  })

  it("domain_skills is confident at 40% or more", () => {
    const confident = [{ taskType: "math.solve", probability: 0.4 }, { taskType: "coding.gen", probability: 0.6 }]
    const outcome = ranked(fixtureInput({
      policy: "domain_skills",
      taskDistribution: confident,
      topTaskType: "math.solve"
    }))
    assert.isFalse(outcome.lowConfidence)
  })
})

describe("rank: the 5% floor", () => {
  it("drops math.solve at 4% and renormalizes coding.gen 0.625, coding.review 0.375", () => {
    // W code 0.625*0.8 + 0.375*0.5 = 0.6875, chat 0.625*0.2 + 0.375*0.5 = 0.3125
    // atlas 0.6875 + 0.3125*0.6 = 0.875; bolt 0.6875*0.6 + 0.3125*0.9 = 0.69375 (no math weight, nothing imputed)
    // O = 0.625*1000 + 0.375*500 = 812.5, T = 0.625 + 0.375*2 = 1.375
    // bolt cost 1.375*(1000*0.5 + 812.5*1*1.5)/1e6 = 1.375*1718.75/1e6 = 0.00236328
    const outcome = ranked(fixtureInput({
      policy: "capability_heavy",
      taskDistribution: [
        { taskType: "coding.gen", probability: 0.6 },
        { taskType: "coding.review", probability: 0.36 },
        { taskType: "math.solve", probability: 0.04 }
      ]
    }))
    const bolt = outcome.ranking.find((entry) => entry.id === "acme/bolt")!
    assert.strictEqual(outcome.ranking[0]!.expected_quality, 0.875)
    assert.deepStrictEqual([bolt.expected_quality, bolt.imputed, bolt.estimated_cost_usd], [0.69375, [], 0.00236328])
  })
})
