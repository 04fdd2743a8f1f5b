import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { optionsOf } from "../../src/runs/Questions.js"
import type { QuestionType } from "../../src/providers/ModelProvider.js"

const problem = (type: QuestionType, criteria: unknown): string => {
  const result = optionsOf(type, criteria)
  return Result.isFailure(result) ? result.failure : assert.fail("the criteria were accepted")
}
const names = (count: number) => Array.from({ length: count }, (_, i) => `option${i + 1}`)
const nulls = (keys: ReadonlyArray<string>) => Object.fromEntries(keys.map((key) => [key, null]))

describe("optionsOf", () => {
  it("reads score levels from an array or an object, lowest first, integer-like names in numeric order", () => {
    assert.deepStrictEqual(
      optionsOf("score", { low: "fine", high: "bad" }),
      Result.succeed([{ name: "low", description: "fine" }, { name: "high", description: "bad" }])
    )
    assert.deepStrictEqual(
      Result.map(optionsOf("score", { "10": null, "2": null }), (options) => options.map((o) => o.name)),
      Result.succeed(["2", "10"])
    )
  })

  it("counts options and levels: 2 to 20", () => {
    assert.strictEqual(problem("choice", nulls(names(21))), "choice needs 2 to 20 options, got 21")
    assert.strictEqual(problem("choice", nulls(names(1))), "choice needs 2 to 20 options, got 1")
    assert.strictEqual(problem("score", ["only"]), "score needs 2 to 20 levels, got 1")
    assert.strictEqual(problem("score", names(21)), "score needs 2 to 20 levels, got 21")
    assert.isTrue(Result.isSuccess(optionsOf("choice", nulls(names(20)))))
  })

  it("checks criteria shapes", () => {
    const choiceShape = "choice criteria must be an object of option name to description (or null)"
    assert.strictEqual(problem("choice", ["a", "b"]), choiceShape)
    assert.strictEqual(problem("choice", undefined), choiceShape)
    assert.strictEqual(problem("choice", { a: 1, b: null }), `the description of option "a" must be a string or null`)
    assert.strictEqual(
      problem("score", "low,high"),
      "score criteria must be an array of level names or an object of level name to description"
    )
    assert.strictEqual(problem("score", ["low", 2]), "score level 1 must be a string")
    assert.strictEqual(problem("score", ["low", "low"]), `level "low" is listed twice`)
    assert.match(problem("score", { low: null, "2": null }), /^score levels given as an object cannot mix integer-like names \("2"\)/)
  })

  it("checks noul criteria", () => {
    assert.deepStrictEqual(
      optionsOf("noul", { true: "it holds" }),
      Result.succeed([{ name: "yes", description: "it holds" }, { name: "no", description: null }])
    )
    assert.strictEqual(problem("noul", { true: "a", maybe: "b" }), `noul criteria accept only the keys "true" and "false", got "maybe"`)
    assert.strictEqual(problem("noul", "yes"), `noul criteria must be an object {"true": ..., "false": ...}`)
    assert.strictEqual(problem("noul", { false: 3 }), `the description of criterion "false" must be a string or null`)
  })

  it("checks option names and descriptions", () => {
    assert.strictEqual(problem("choice", nulls(["", "b"])), "option names must not be empty")
    assert.strictEqual(problem("choice", nulls([" a", "b"])), `option name " a" has leading or trailing whitespace`)
    assert.strictEqual(problem("choice", nulls(["a\nb", "c"])), `option name "a\\nb" contains a control character`)
    assert.match(problem("choice", nulls(["x".repeat(129), "b"])), /is longer than 128 characters$/)
    assert.strictEqual(
      problem("choice", { a: "d".repeat(4097), b: null }),
      `the description of option "a" is longer than 4096 characters`
    )
  })
})
