import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"
import { InputTooLarge } from "../../schema/Errors.js"
import {
  callCostMicros,
  checkInputEstimate,
  contractBytes,
  DECISION_INPUT_LIMIT,
  defaultDeadlineMs,
  inputEstimate,
  promptBytes,
  SPEND_CEILING_MICROS
} from "../../src/runs/RunLimits.js"

describe("Pricing", () => {
  it("prices the spec's full decision: 262,144 input + 16 output tokens at 42,000/Mtok = 11,012", () => {
    assert.strictEqual(callCostMicros(262_144, 16, 42_000), 11_012)
  })

  it("rounds each part up separately: three calls of 1,000 in + 1 out cost 3 x 43 = 129", () => {
    const one = callCostMicros(1_000, 1, 42_000)
    assert.strictEqual(one, 43)
    assert.strictEqual(one * 3, 129)
    assert.strictEqual(callCostMicros(0, 0, 42_000), 0)
    assert.strictEqual(callCostMicros(1, 1, 1), 2)
  })

  it("computes exactly where floats would not", () => {
    assert.strictEqual(callCostMicros(9_007_199_254_740_991, 0, 1_000_000), 9_007_199_254_740_991)
    assert.strictEqual(callCostMicros(1_000_000, 0, 3), 3)
    assert.throws(() => callCostMicros(1.5, 0, 42_000), RangeError)
    assert.throws(() => callCostMicros(-1, 0, 42_000), RangeError)
  })

  it("each part rounds up to the least whole micro-USD covering it", () =>
    fc.assert(fc.property(
      fc.integer({ min: 0, max: 2_000_000 }),
      fc.integer({ min: 0, max: 2_000_000 }),
      fc.integer({ min: 0, max: 10_000_000 }),
      (input, output, price) => {
        // The rounded part r is the least whole number with r x 1e6 >= tokens x price.
        const roundsUp = (tokens: number) => {
          const exact = BigInt(tokens) * BigInt(price)
          const rounded = BigInt(callCostMicros(tokens, 0, price))
          return rounded * 1_000_000n >= exact && (rounded === 0n || (rounded - 1n) * 1_000_000n < exact)
        }
        assert.isTrue(roundsUp(input))
        assert.isTrue(roundsUp(output))
        assert.strictEqual(
          callCostMicros(input, output, price),
          callCostMicros(input, 0, price) + callCostMicros(0, output, price)
        )
      }
    )))

  it("estimates input as ceil(prompt bytes / 4) + ceil(contract bytes / 4)", () => {
    assert.strictEqual(inputEstimate({ promptBytes: 5, contractBytes: 4 }), 3)
    assert.strictEqual(inputEstimate({ promptBytes: 0, contractBytes: 1 }), 1)
    assert.strictEqual(promptBytes("é€"), 5)
    const questions = { q: { type: "noul", instructions: "Ok?" } }
    assert.strictEqual(
      contractBytes({ instructions: "Be brief", questions }),
      `{"instructions":"Be brief","questions":{"q":{"instructions":"Ok?","type":"noul"}}}`.length
    )
    assert.strictEqual(contractBytes({ questions }), `{"questions":{"q":{"instructions":"Ok?","type":"noul"}}}`.length)
  })

  it("checks the estimate against the kind's limit", () => {
    assert.deepStrictEqual(checkInputEstimate("decision", DECISION_INPUT_LIMIT), Result.succeed(DECISION_INPUT_LIMIT))
    const over = checkInputEstimate("decision", DECISION_INPUT_LIMIT + 1)
    assert.isTrue(Result.isFailure(over) && over.failure instanceof InputTooLarge)
    assert.strictEqual(
      Result.isFailure(over) ? over.failure.message : "",
      "estimated input of 262145 tokens is over the decision limit of 262144 tokens"
    )
    assert.isTrue(Result.isFailure(checkInputEstimate("verdict", 64_001)))
    assert.isTrue(Result.isSuccess(checkInputEstimate("verdict", 64_000)))
  })

  it("sets default deadlines: 30 s plus up to 120 s scaled by input, rounded up, at most 150 s", () => {
    assert.strictEqual(defaultDeadlineMs("decision", 0), 30_000)
    assert.strictEqual(defaultDeadlineMs("decision", 1), 30_001)
    assert.strictEqual(defaultDeadlineMs("decision", 131_072), 90_000)
    assert.strictEqual(defaultDeadlineMs("decision", 262_144), 150_000)
    assert.strictEqual(defaultDeadlineMs("decision", 1_000_000), 150_000)
    assert.strictEqual(defaultDeadlineMs("verdict", 64_000), 30_000)
  })

  it("keeps the spec's ceiling", () => {
    assert.strictEqual(SPEND_CEILING_MICROS, 20_000)
  })
})
