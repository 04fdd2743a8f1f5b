/** The pure part of the usage service: the quota's remaining amounts. */
import { assert, describe, it } from "@effect/vitest"
import { remaining } from "../../src/usage/Usage.js"

describe("remaining", () => {
  it("is null without a limit", () => assert.isNull(remaining(null, 5, 5)))

  it("is the limit less what is settled and held, and zero (never negative) once they pass it", () => {
    assert.strictEqual(remaining(1_000, 403, 0), 597)
    assert.strictEqual(remaining(50_000, 0, 20_000), 30_000)
    assert.strictEqual(remaining(20_000, 400, 19_600), 0)
    assert.strictEqual(remaining(100, 403, 20_000), 0)
  })
})
