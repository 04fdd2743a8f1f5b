import { assert, describe, it } from "@effect/vitest"
import type { ModelCall } from "../../src/providers/ModelProvider.js"
import { callCostMicros } from "../../src/runs/RunLimits.js"
import { makeRunBudget, type RunBudget } from "../../src/runs/RunBudget.js"

const call = (purpose: ModelCall["purpose"], inputTokens: number, outputTokens: number, status: ModelCall["status"] = "succeeded"): ModelCall => ({
  retryOrdinal: 0,
  status,
  inputTokens,
  outputTokens,
  providerRequestId: null,
  at: new Date(0),
  purpose
})

describe("RunBudget", () => {
  const estimate = { answer: 1_000, think: 1_010, followUp: 20 }
  // A read's calls priced as they end, then its hold released, as the engine does (DecisionEngine.ts).
  const settle = (budget: RunBudget, worst: number, calls: ReadonlyArray<ModelCall>) => {
    const hold = { remaining: worst }
    const costed = calls.map((each) => budget.price(hold, each))
    budget.release(hold, estimate, calls)
    return costed
  }

  it("prices a read's worst case: one letter call, or a thought plus a letter call carrying it", () => {
    const budget = makeRunBudget(20_000, 42_000)
    assert.strictEqual(budget.worstCase(estimate, 0), callCostMicros(1_000, 1, 42_000))
    assert.strictEqual(
      budget.worstCase(estimate, 100),
      callCostMicros(1_010, 100, 42_000) + callCostMicros(1_010 + 20 + 100, 1, 42_000)
    )
  })

  it("holds worst cases until the ceiling and refuses the one that would pass it", () => {
    const budget = makeRunBudget(100, 42_000)
    assert.isTrue(budget.hold(43))
    assert.isTrue(budget.hold(43))
    assert.isFalse(budget.hold(43))
    assert.deepStrictEqual(budget.snapshot(), { spent: 0, held: 86, ceiling: 100 })
  })

  it("replaces a hold by the actual cost of the read's calls, failed attempts costing nothing", () => {
    const budget = makeRunBudget(100, 42_000)
    budget.hold(43)
    const costed = settle(budget, 43, [call("answer", 0, 0, "failed"), call("answer", 500, 1)])
    assert.deepStrictEqual(costed.map((c) => c.costMicros), [0, 22])
    assert.deepStrictEqual(budget.snapshot(), { spent: 22, held: 0, ceiling: 100 })
  })

  it("scales later estimates by the largest actual/estimated ratio seen, never below 1", () => {
    const budget = makeRunBudget(20_000, 42_000)
    settle(budget, 0, [call("answer", 500, 1)])
    assert.strictEqual(budget.worstCase(estimate, 0), callCostMicros(1_000, 1, 42_000))
    settle(budget, 0, [call("answer", 2_000, 1)])
    assert.strictEqual(budget.worstCase(estimate, 0), callCostMicros(2_000, 1, 42_000))
    settle(budget, 0, [call("think", 1_010 * 3, 40), call("answer", (1_010 + 20 + 40) * 3, 1)])
    assert.strictEqual(budget.worstCase(estimate, 0), callCostMicros(3_000, 1, 42_000))
  })
})
