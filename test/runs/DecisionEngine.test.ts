import { assert, describe, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Layer, Result } from "effect"
import { ProviderUnavailable } from "../../schema/Errors.js"
import { LocalModel } from "../../src/providers/LocalModel.js"
import { ModelProvider, ProviderFailure } from "../../src/providers/ModelProvider.js"
import type { ModelCall, Read, ReadOutcome } from "../../src/providers/ModelProvider.js"
import type { ChoiceAnswer } from "../../src/runs/Answers.js"
import { callOccurred } from "../../src/runs/DecisionEngine.js"
import { executeDecision } from "../support/DecisionEngine.js"
import type { DecisionOptions } from "../../src/runs/DecisionEngine.js"
import type { DecisionPlan } from "../../src/runs/DecisionPlan.js"
import { compileQuestions } from "../../src/runs/Questions.js"
import type { CompileOptions, WireQuestion } from "../../src/runs/Questions.js"

const plan = (questions: Record<string, WireQuestion>, options?: CompileOptions): DecisionPlan =>
  Result.getOrThrow(compileQuestions(questions, options))

const options = (overrides: Partial<DecisionOptions> = {}): DecisionOptions => ({
  state: "ticket: the printer is on fire",
  draws: 1,
  thinkTokens: 0,
  deadline: 60_000,
  ceilingMicros: 20_000,
  pricePerMtokMicros: 42_000,
  ...overrides
})

const succeeded = (inputTokens = 1_000): ModelCall => ({
  retryOrdinal: 0,
  status: "succeeded",
  inputTokens,
  outputTokens: 1,
  providerRequestId: "r",
  at: new Date(0),
  purpose: "answer"
})

/** A provider answering from a function of the read; it logs every read it gets. */
const scripted = (answer: (read: Read) => Effect.Effect<ReadonlyArray<number>, ProviderFailure> | ReadonlyArray<number>) => {
  const reads: Array<Read> = []
  const layer = Layer.succeed(ModelProvider, {
    identity: { provider: "test", modelId: "scripted" },
    read: (read) => {
      reads.push(read)
      const result = answer(read)
      return Effect.map(
        Effect.isEffect(result) ? result : Effect.succeed(result),
        (probabilities): ReadOutcome => ({ probabilities, calls: [succeeded()] })
      )
    }
  })
  return { layer, reads }
}

/** Puts `p` on the option named `name` and spreads the rest evenly. */
const favour = (read: Read, name: string, p: number): ReadonlyArray<number> =>
  read.options.map((option) => option.name === name ? p : (1 - p) / (read.options.length - 1))

describe("executeDecision", () => {
  it.effect("reads stages in order and carries earlier answers into dependent reads", () =>
    Effect.gen(function*() {
      const provider = scripted((read) => favour(read, read.type === "noul" ? "yes" : "billing", 0.9))
      const result = yield* executeDecision(
        plan({
          team: { type: "choice", instructions: "Which team?", criteria: { billing: null, support: null }, depends_on: ["urgent"] },
          urgent: { type: "noul", instructions: "It is urgent" }
        }),
        options()
      ).pipe(Effect.provide(provider.layer))
      assert.deepStrictEqual(provider.reads.map((read) => read.instructions), ["It is urgent", "Which team?"])
      assert.deepStrictEqual(provider.reads[1]!.context, [
        { question: "urgent", instructions: "It is urgent", answer: "yes (probability 0.90)" }
      ])
      assert.deepStrictEqual(provider.reads[0]!.context, [])
      assert.strictEqual(provider.reads[0]!.state, "ticket: the printer is on fire")
      assert.deepStrictEqual(Object.keys(result.answers), ["team", "urgent"])
      assert.deepStrictEqual(result.answers["urgent"], { type: "noul", probability: 0.9 })
      assert.strictEqual((result.answers["team"] as ChoiceAnswer).choice, "billing")
      assert.isNull(result.error)
      assert.deepStrictEqual(result.skipped, {})
      assert.strictEqual(result.calls.length, 2)
      assert.deepStrictEqual(result.calls.map((call) => call.costMicros), [43, 43])
      assert.strictEqual(result.costMicros, 86)
      assert.strictEqual(result.inputTokens, 2_000)
      assert.strictEqual(result.outputTokens, 2)
      assert.isTrue(callOccurred(result))
    }))

  it.effect("skips a question whose ask_if fails, records why, and skips what depends on it", () =>
    Effect.gen(function*() {
      const provider = scripted((read) => favour(read, "yes", 0.8))
      const result = yield* executeDecision(
        plan({
          spam: { type: "noul", instructions: "It is spam" },
          reply: { type: "noul", instructions: "Needs a reply", ask_if: { spam: ["no"] } },
          escalate: { type: "noul", instructions: "Escalate", ask_if: { reply: ["yes"] } },
          block: { type: "noul", instructions: "Block the sender", ask_if: { spam: ["yes"] } }
        }),
        options()
      ).pipe(Effect.provide(provider.layer))
      assert.deepStrictEqual(provider.reads.map((read) => read.instructions), ["It is spam", "Block the sender"])
      assert.isNull(result.answers["reply"])
      assert.isNull(result.answers["escalate"])
      assert.deepStrictEqual(result.answers["block"], { type: "noul", probability: 0.8 })
      assert.deepStrictEqual(result.skipped, {
        reply: { because: "spam", was: "yes", wanted: ["no"] },
        escalate: { because: "reply", was: null, wanted: ["yes"] }
      })
      assert.strictEqual(result.calls.length, 2)
      assert.isNull(result.error)
    }))

  it.effect("asks a question under an internal condition only when the probability reaches the minimum", () =>
    Effect.gen(function*() {
      const provider = scripted((read) =>
        read.instructions === "Family?" ? [0.96, 0.04] : favour(read, read.options[0]!.name, 0.9)
      )
      const result = yield* executeDecision(
        plan(
          {
            family: { type: "choice", instructions: "Family?", criteria: { coding: null, math: null } },
            coding_type: { type: "choice", instructions: "Coding type?", criteria: { bugfix: null, refactor: null }, alone: true },
            math_type: { type: "choice", instructions: "Math type?", criteria: { proof: null, algebra: null }, alone: true }
          },
          {
            internalConditions: {
              coding_type: [{ kind: "probability_at_least", question: "family", alternative: "coding", min: 0.05 }],
              math_type: [{ kind: "probability_at_least", question: "family", alternative: "math", min: 0.05 }]
            }
          }
        ),
        options()
      ).pipe(Effect.provide(provider.layer))
      assert.deepStrictEqual(provider.reads.map((read) => read.instructions), ["Family?", "Coding type?"])
      assert.deepStrictEqual(provider.reads[1]!.context, [], "alone reads carry no earlier answers")
      assert.deepStrictEqual(result.skipped, { math_type: { because: "family", was: "coding", wanted: ["math"] } })
      assert.strictEqual((result.answers["coding_type"] as ChoiceAnswer).choice, "bugfix")
    }))

  it.effect("reads each draw in its rotation and averages by option", () =>
    Effect.gen(function*() {
      const firstLetterBias = scripted(() => [0.7, 0.2, 0.1])
      const result = yield* executeDecision(
        plan({ colour: { type: "choice", instructions: "Colour?", criteria: { red: null, green: null, blue: null } } }),
        options({ draws: 3 })
      ).pipe(Effect.provide(firstLetterBias.layer))
      assert.deepStrictEqual(
        firstLetterBias.reads.map((read) => read.options.map((option) => option.name)),
        [["red", "green", "blue"], ["green", "blue", "red"], ["blue", "red", "green"]]
      )
      const answer = result.answers["colour"] as ChoiceAnswer
      for (const p of Object.values(answer.probabilities)) assert.closeTo(p, 1 / 3, 1e-12)
      assert.closeTo(answer.confidence, 0, 1e-9)
      assert.strictEqual(result.calls.length, 3)
    }))

  it.effect("passes think tokens, capped by max output tokens", () =>
    Effect.gen(function*() {
      const provider = scripted((read) => favour(read, "yes", 0.6))
      const noul = plan({ q: { type: "noul", instructions: "Ok" } })
      yield* executeDecision(noul, options({ thinkTokens: 512 })).pipe(Effect.provide(provider.layer))
      yield* executeDecision(noul, options({ thinkTokens: 512, maxOutputTokens: 64 })).pipe(Effect.provide(provider.layer))
      assert.deepStrictEqual(provider.reads.map((read) => read.thinkTokens), [512, 64])
    }))

  it.effect("stops at the first error; reads in flight complete and keep their calls; later stages are not read", () =>
    Effect.gen(function*() {
      const bStarted = yield* Deferred.make<void>()
      const aFailed = yield* Deferred.make<void>()
      const failed: ModelCall = { ...succeeded(), status: "failed", inputTokens: 0, outputTokens: 0 }
      const provider = scripted((read) =>
        read.instructions === "a"
          ? Effect.andThen(
            Deferred.await(bStarted),
            Effect.andThen(
              Deferred.succeed(aFailed, undefined),
              Effect.fail(new ProviderFailure({ error: new ProviderUnavailable({ message: "down" }), calls: [failed] }))
            )
          )
          : Effect.andThen(Deferred.succeed(bStarted, undefined), Effect.as(Deferred.await(aFailed), [0.3, 0.7]))
      )
      const result = yield* executeDecision(
        plan({
          a: { type: "noul", instructions: "a" },
          b: { type: "noul", instructions: "b" },
          c: { type: "noul", instructions: "c", depends_on: ["a"] }
        }),
        options()
      ).pipe(Effect.provide(provider.layer))
      assert.strictEqual(result.error?._tag, "provider_unavailable")
      assert.deepStrictEqual(provider.reads.map((read) => read.instructions), ["a", "b"])
      assert.deepStrictEqual(result.calls.map((call) => call.status), ["failed", "succeeded"])
      assert.deepStrictEqual(Object.keys(result.answers), ["b"])
      assert.strictEqual(result.costMicros, 43)
      assert.isTrue(callOccurred(result))
    }))

  it.effect("refuses every read past the deadline: deadline_exceeded, no call occurred", () =>
    Effect.gen(function*() {
      const provider = scripted(() => [0.5, 0.5])
      const result = yield* executeDecision(plan({ q: { type: "noul", instructions: "q" } }), options({ deadline: 0 }))
        .pipe(Effect.provide(provider.layer))
      assert.strictEqual(result.error?._tag, "deadline_exceeded")
      assert.deepStrictEqual(provider.reads, [])
      assert.deepStrictEqual(result.calls, [])
      assert.isFalse(callOccurred(result))
    }))

  it.effect("a provider that dies: the engine stops reading and dies with its defect", () =>
    Effect.gen(function*() {
      const provider = scripted((read) => read.instructions === "b" ? Effect.die(new Error("provider bug")) : [0.5, 0.5])
      const exit = yield* Effect.exit(
        executeDecision(
          plan({ a: { type: "noul", instructions: "a" }, b: { type: "noul", instructions: "b", depends_on: ["a"] }, c: { type: "noul", instructions: "c", depends_on: ["b"] } }),
          options()
        ).pipe(Effect.provide(provider.layer))
      )
      assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
      assert.deepStrictEqual(provider.reads.map((read) => read.instructions), ["a", "b"], "nothing read after the defect")
    }))

  it.effect("budget_exhausted when even the first read's worst case passes the ceiling", () =>
    Effect.gen(function*() {
      const provider = scripted(() => [0.5, 0.5])
      const result = yield* executeDecision(plan({ q: { type: "noul", instructions: "q" } }), options({ ceilingMicros: 1 }))
        .pipe(Effect.provide(provider.layer))
      assert.strictEqual(result.error?._tag, "budget_exhausted")
      assert.match(result.error!.message, /^the next read could cost up to \d+ micro-USD; with 0 spent and 0 held that would pass the run's ceiling of 1$/)
      assert.deepStrictEqual(provider.reads, [])
      assert.strictEqual(result.costMicros, 0)
      assert.isFalse(callOccurred(result))
    }))

  it.effect("with the local model, draws agree and the answer follows the state", () =>
    Effect.gen(function*() {
      const result = yield* executeDecision(
        plan({
          team: {
            type: "choice",
            instructions: "Which team?",
            criteria: { sales: "pricing and contracts", billing: "invoices and refunds", engineering: "bugs and outages" }
          },
          severity: { type: "score", instructions: "How severe?", criteria: { minor: "cosmetic", major: "outage of the service" } }
        }),
        options({ state: "I need a refund: the invoice charged me twice.", draws: 4 })
      ).pipe(Effect.provide(LocalModel.layer))
      assert.isNull(result.error)
      assert.strictEqual((result.answers["team"] as ChoiceAnswer).choice, "billing")
      assert.strictEqual(result.calls.length, 8)
      assert.isTrue(result.calls.every((call) => call.status === "succeeded" && call.costMicros > 0))
    }))
})
