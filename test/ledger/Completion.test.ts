import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber } from "effect"
import { makeCompletion } from "../../src/ledger/Completion.js"

describe("Completion", () => {
  it.effect("waiters before the result and after it all get it; a second result is ignored", () =>
    Effect.gen(function*() {
      const completion = makeCompletion<number, string>()
      const early = yield* Effect.forkChild(completion.wait)
      const alsoEarly = yield* Effect.forkChild(completion.wait)
      yield* Effect.yieldNow
      assert.isUndefined(early.pollUnsafe(), "no result yet")
      completion.complete(Exit.succeed(7))
      completion.complete(Exit.succeed(8))
      assert.strictEqual(yield* Fiber.join(early), 7)
      assert.strictEqual(yield* Fiber.join(alsoEarly), 7)
      assert.strictEqual(yield* completion.wait, 7)
    }))

  it.effect("a failure reaches every waiter as the wait's failure", () =>
    Effect.gen(function*() {
      const completion = makeCompletion<number, string>()
      const waiter = yield* Effect.forkChild(completion.wait)
      yield* Effect.yieldNow
      completion.complete(Exit.fail("refused"))
      assert.deepStrictEqual(yield* Fiber.await(waiter), Exit.fail("refused"))
      assert.deepStrictEqual(yield* Effect.exit(completion.wait), Exit.fail("refused"))
    }))

  it.effect("an interrupted waiter ends at once; the others still get the result", () =>
    Effect.gen(function*() {
      const completion = makeCompletion<number, never>()
      const interrupted = yield* Effect.forkChild(completion.wait)
      const other = yield* Effect.forkChild(completion.wait)
      yield* Effect.yieldNow
      yield* Fiber.interrupt(interrupted)
      assert.isTrue(Exit.hasInterrupts(yield* Fiber.await(interrupted)))
      completion.complete(Exit.succeed(1))
      assert.strictEqual(yield* Fiber.join(other), 1)
    }))
})
