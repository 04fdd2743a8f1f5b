import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { letterPrompt } from "../../src/providers/LetterReadout.js"
import { LOCAL_IDENTITY, LocalModel, words } from "../../src/providers/LocalModel.js"
import { ModelProvider } from "../../src/providers/ModelProvider.js"
import type { Read } from "../../src/providers/ModelProvider.js"
import { rotateOptions } from "../../src/runs/Draws.js"

const teams: Read = {
  state: "customer: Ada\nmessage: I was charged twice on my invoice and want a refund of the payment.",
  context: [],
  instructions: "Which team should handle the message?",
  type: "choice",
  options: [
    { name: "sales", description: "new contracts, pricing and upgrades" },
    { name: "billing", description: "invoices, payments, charges and refunds" },
    { name: "engineering", description: "bugs, crashes and outages" }
  ],
  thinkTokens: 0
}

const proposition = (instructions: string): Read => ({
  ...teams,
  type: "noul",
  instructions,
  options: [{ name: "yes", description: null }, { name: "no", description: null }]
})

const readLocal = (read: Read, deadline = 60_000) =>
  Effect.flatMap(ModelProvider, (provider) => provider.read(read, { deadline })).pipe(Effect.provide(LocalModel.layer))

describe("LocalModel", () => {
  it.effect("is deterministic: the same read twice gives the identical outcome", () =>
    Effect.gen(function*() {
      const first = yield* readLocal(teams)
      const second = yield* readLocal(teams)
      assert.deepStrictEqual(first, second)
      assert.deepStrictEqual(first.probabilities, second.probabilities)
      assert.strictEqual(first.calls[0]!.providerRequestId, second.calls[0]!.providerRequestId)
    }))

  it.effect("picks the option whose words match the state", () =>
    Effect.gen(function*() {
      const outcome = yield* readLocal(teams)
      const [sales, billing, engineering] = outcome.probabilities
      assert.isAbove(billing!, 0.8)
      assert.isBelow(sales!, 0.1)
      assert.isBelow(engineering!, 0.1)
      assert.closeTo(outcome.probabilities.reduce((a, b) => a + b, 0), 1, 1e-12)
    }))

  it.effect("gives the same probability to an option whatever its position", () =>
    Effect.gen(function*() {
      const base = yield* readLocal(teams)
      const rotated = yield* readLocal({ ...teams, options: rotateOptions(teams.options, 1) })
      assert.deepStrictEqual(rotated.probabilities, rotateOptions(base.probabilities, 1))
    }))

  it.effect("reads a noul as the share of the proposition found in the state", () =>
    Effect.gen(function*() {
      const refund = yield* readLocal(proposition("The customer wants a refund of a payment"))
      const outage = yield* readLocal(proposition("The website outage crashed the mobile app"))
      assert.isAbove(refund.probabilities[0]!, 0.8)
      assert.isBelow(outage.probabilities[0]!, 0.2)
      const flipped = yield* readLocal({ ...proposition("The customer wants a refund of a payment"), options: rotateOptions(proposition("x").options, 1) })
      assert.strictEqual(flipped.probabilities[1], refund.probabilities[0])
    }))

  it.effect("counts earlier answers as evidence", () =>
    Effect.gen(function*() {
      const bare: Read = { ...teams, state: "A message arrived.", options: [{ name: "urgent", description: null }, { name: "routine", description: null }] }
      const without = yield* readLocal(bare)
      const withContext = yield* readLocal({
        ...bare,
        context: [{ question: "kind", instructions: "What kind of message?", answer: "urgent (probability 0.90)" }]
      })
      assert.closeTo(without.probabilities[0]!, 0.5, 1e-12)
      assert.isAbove(withContext.probabilities[0]!, 0.8)
    }))

  it.effect("reports usage as the letter readout would, one call, ignoring think tokens", () =>
    Effect.gen(function*() {
      const outcome = yield* readLocal({ ...teams, thinkTokens: 256 })
      assert.strictEqual(outcome.calls.length, 1)
      const call = outcome.calls[0]!
      assert.strictEqual(call.inputTokens, Math.ceil(Buffer.byteLength(letterPrompt(teams)) / 4))
      assert.strictEqual(call.outputTokens, 1)
      assert.strictEqual(call.status, "succeeded")
      assert.strictEqual(call.purpose, "answer")
      assert.strictEqual(call.retryOrdinal, 0)
      assert.match(call.providerRequestId!, /^local_[0-9a-f]{32}$/)
      const provider = yield* Effect.provide(ModelProvider, LocalModel.layer)
      assert.deepStrictEqual(provider.identity, LOCAL_IDENTITY)
    }))

  it.effect("fails with deadline_exceeded and no call once the deadline has passed", () =>
    Effect.gen(function*() {
      const failure = yield* Effect.flip(readLocal(teams, 0))
      assert.strictEqual(failure.error._tag, "deadline_exceeded")
      assert.deepStrictEqual(failure.calls, [])
    }))

  it("splits words, drops stop words and folds plurals", () => {
    assert.deepStrictEqual(words("The Invoices were PAID, and refunds queries!"), ["invoice", "paid", "refund", "query"])
  })
})
