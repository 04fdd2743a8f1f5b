import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { InvalidDecisionQuestions } from "../../schema/Errors.js"
import type { DecisionPlan } from "../../src/runs/DecisionPlan.js"
import { compileQuestions } from "../../src/runs/Questions.js"
import type { CompileOptions, WireQuestion } from "../../src/runs/Questions.js"

const noul = (instructions = "Is it urgent?", extra: Partial<WireQuestion> = {}): WireQuestion => ({
  type: "noul",
  instructions,
  ...extra
})
const choice = (names: ReadonlyArray<string>, extra: Partial<WireQuestion> = {}): WireQuestion => ({
  type: "choice",
  instructions: "Which one?",
  criteria: Object.fromEntries(names.map((name) => [name, null])),
  ...extra
})

const compiled = (questions: Record<string, WireQuestion>, options?: CompileOptions): DecisionPlan => {
  const result = compileQuestions(questions, options)
  if (Result.isFailure(result)) return assert.fail(result.failure.message)
  return result.success
}

const refusal = (questions: Record<string, unknown>, options?: CompileOptions): string => {
  const result = compileQuestions(questions as Record<string, WireQuestion>, options)
  if (Result.isSuccess(result)) return assert.fail("the question set was accepted")
  assert.instanceOf(result.failure, InvalidDecisionQuestions)
  assert.strictEqual(result.failure._tag, "invalid_decision_questions")
  return result.failure.message
}

const names = (count: number) => Array.from({ length: count }, (_, i) => `option${i + 1}`)

describe("compileQuestions", () => {
  describe("accepted sets", () => {
    it("reads each type's alternatives in order", () => {
      const plan = compiled({
        urgent: noul("The message is urgent", { criteria: { true: "needs action today", false: null } }),
        tone: { type: "choice", instructions: "Tone?", criteria: { formal: "polite", casual: null, angry: "rude" } },
        size: { type: "score", instructions: "Size?", criteria: ["small", "medium", "large"] },
        risk: { type: "score", instructions: "Risk?", criteria: { low: "fine", mid: null, high: "bad" } },
        stars: { type: "score", instructions: "Stars?", criteria: { "1": null, "2": null, "10": null } }
      })
      const byId = Object.fromEntries(plan.questions.map((q) => [q.id, q]))
      assert.deepStrictEqual(byId["urgent"]!.options, [
        { name: "yes", description: "needs action today" },
        { name: "no", description: null }
      ])
      assert.deepStrictEqual(byId["tone"]!.options.map((o) => o.name), ["formal", "casual", "angry"])
      assert.deepStrictEqual(byId["size"]!.options, [
        { name: "small", description: null },
        { name: "medium", description: null },
        { name: "large", description: null }
      ])
      assert.deepStrictEqual(byId["risk"]!.options.map((o) => o.description), ["fine", null, "bad"])
      assert.deepStrictEqual(byId["stars"]!.options.map((o) => o.name), ["1", "2", "10"])
      assert.deepStrictEqual(plan.questions.map((q) => q.id), ["urgent", "tone", "size", "risk", "stars"])
      assert.strictEqual(plan.stages.length, 1)
    })

    it("gives a noul without criteria plain yes and no", () => {
      const plan = compiled({ q: noul() })
      assert.deepStrictEqual(plan.questions[0]!.options, [
        { name: "yes", description: null },
        { name: "no", description: null }
      ])
    })

    it("accepts 64 questions and 20 options", () => {
      const questions = Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`q${i}`, choice(names(20))]))
      assert.strictEqual(compiled(questions).questions.length, 64)
    })

    it("stages questions after everything they depend on", () => {
      const plan = compiled({
        d: noul("d", { depends_on: ["b", "c"] }),
        c: noul("c", { depends_on: ["a"] }),
        b: noul("b", { ask_if: { a: ["yes"] } }),
        a: noul("a"),
        e: noul("e", { depends_on: ["a", "a"] })
      })
      assert.deepStrictEqual(plan.stages.map((stage) => stage.map((q) => q.id)), [["a"], ["c", "b", "e"], ["d"]])
      const byId = Object.fromEntries(plan.questions.map((q) => [q.id, q]))
      assert.deepStrictEqual(byId["b"]!.dependsOn, ["a"])
      assert.deepStrictEqual(byId["b"]!.conditions, [{ kind: "answer_in", question: "a", answers: ["yes"] }])
      assert.deepStrictEqual(byId["e"]!.dependsOn, ["a"])
      assert.strictEqual(byId["d"]!.stage, 2)
    })

    it("keeps alone and adds internal conditions to the dependencies", () => {
      const plan = compiled(
        { family: choice(["coding", "math"]), task: choice(["bugfix", "refactor"], { alone: true }) },
        { internalConditions: { task: [{ kind: "probability_at_least", question: "family", alternative: "coding", min: 0.05 }] } }
      )
      const task = plan.questions.find((q) => q.id === "task")!
      assert.isTrue(task.alone)
      assert.deepStrictEqual(task.dependsOn, ["family"])
      assert.deepStrictEqual(task.conditions, [
        { kind: "probability_at_least", question: "family", alternative: "coding", min: 0.05 }
      ])
      assert.strictEqual(task.stage, 1)
    })
  })

  describe("refusals name the question and the rule", () => {
    it("counts questions", () => {
      assert.strictEqual(refusal({}), "a decision needs 1 to 64 questions, got 0")
      const tooMany = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`q${i}`, noul()]))
      assert.strictEqual(refusal(tooMany), "a decision needs 1 to 64 questions, got 65")
    })

    it("checks question ids", () => {
      assert.strictEqual(
        refusal({ "bad id": noul() }),
        `question id "bad id" must be 1 to 64 characters of A-Z a-z 0-9 _ . : -`
      )
      assert.match(refusal({ ["x".repeat(65)]: noul() }), /must be 1 to 64 characters/)
      assert.strictEqual(compiled({ "a.b:c-d_1": noul() }).questions[0]!.id, "a.b:c-d_1")
    })

    it("refuses an unknown type", () => {
      assert.strictEqual(
        refusal({ q: { type: "bool", instructions: "x" } }),
        `question "q": unknown type "bool" (expected noul, choice or score)`
      )
    })

    it("checks instructions", () => {
      assert.strictEqual(refusal({ q: noul("   ") }), `question "q": instructions must not be empty`)
      assert.strictEqual(
        refusal({ q: noul("x".repeat(16_385)) }),
        `question "q": instructions are 16385 characters, at most 16384`
      )
    })

    it("prefixes criteria problems with the question", () => {
      assert.strictEqual(refusal({ tone: choice(names(21)) }), `question "tone": choice needs 2 to 20 options, got 21`)
      assert.strictEqual(
        refusal({ s: { type: "score", instructions: "x", criteria: ["low", "low"] } }),
        `question "s": level "low" is listed twice`
      )
    })

    it("checks alone", () => {
      assert.strictEqual(refusal({ q: { ...noul(), alone: "yes" } }), `question "q": alone must be true or false`)
    })

    it("checks depends_on", () => {
      assert.strictEqual(
        refusal({ a: noul(), b: noul("b", { depends_on: ["zz"] }) }),
        `question "b": depends_on names unknown question "zz"`
      )
      assert.strictEqual(refusal({ a: noul("a", { depends_on: ["a"] }) }), `question "a": depends_on names the question itself`)
    })

    it("checks ask_if", () => {
      assert.strictEqual(
        refusal({ a: noul(), b: noul("b", { ask_if: { zz: ["yes"] } }) }),
        `question "b": ask_if names unknown question "zz"`
      )
      assert.strictEqual(refusal({ a: noul("a", { ask_if: { a: ["yes"] } }) }), `question "a": ask_if names the question itself`)
      assert.strictEqual(
        refusal({ a: noul(), b: noul("b", { ask_if: { a: ["maybe"] } }) }),
        `question "b": ask_if "a" lists "maybe", which is not an answer of "a" (expected one of yes, no)`
      )
      assert.strictEqual(
        refusal({ a: choice(["red", "blue"]), b: noul("b", { ask_if: { a: ["green"] } }) }),
        `question "b": ask_if "a" lists "green", which is not an answer of "a" (expected one of red, blue)`
      )
      assert.strictEqual(
        refusal({
          a: { type: "score", instructions: "x", criteria: ["low", "high"] },
          b: noul("b", { ask_if: { a: ["medium"] } })
        }),
        `question "b": ask_if "a" lists "medium", which is not an answer of "a" (expected one of low, high)`
      )
      assert.strictEqual(
        refusal({ a: noul(), b: noul("b", { ask_if: { a: [] } }) }),
        `question "b": ask_if "a" needs at least one answer`
      )
    })

    it("refuses cycles, naming the path", () => {
      assert.strictEqual(
        refusal({ a: noul("a", { depends_on: ["b"] }), b: noul("b", { depends_on: ["c"] }), c: noul("c", { depends_on: ["a"] }) }),
        `questions form a cycle: "a" -> "b" -> "c" -> "a"`
      )
      assert.strictEqual(
        refusal({ x: noul(), a: noul("a", { ask_if: { b: ["yes"] } }), b: noul("b", { depends_on: ["a"] }) }),
        `questions form a cycle: "a" -> "b" -> "a"`
      )
    })

    it("checks internal conditions", () => {
      const base = { family: choice(["coding", "math"]), task: choice(["bugfix", "refactor"]) }
      assert.strictEqual(
        refusal(base, { internalConditions: { task: [{ kind: "probability_at_least", question: "family", alternative: "art", min: 0.05 }] } }),
        `question "task": condition on "family" names "art", which is not an answer of it (expected one of coding, math)`
      )
      assert.strictEqual(
        refusal(base, { internalConditions: { task: [{ kind: "probability_at_least", question: "family", alternative: "math", min: 2 }] } }),
        `question "task": condition minimum 2 is outside 0 to 1`
      )
      assert.strictEqual(
        refusal(base, { internalConditions: { nope: [] } }),
        `a condition is attached to unknown question "nope"`
      )
    })
  })
})
