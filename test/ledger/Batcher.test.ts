/**
 * The group-commit batcher: a request with nothing in flight runs at once, alone; requests arriving while the
 * allowed batches are in flight are gathered into the next one; each request gets its own outcome; a batch that
 * fails fails each of its requests and no other.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber } from "effect"
import { makeBatcher } from "../../src/ledger/Batcher.js"

/** A batcher whose batches wait for `release` while `hold` is set; records the batches it ran. */
const recordingBatcher = (options: { maxBatch: number; maxInFlight: number; groupOf?: (item: number) => string }) =>
  Effect.gen(function*() {
    const batches: Array<ReadonlyArray<number>> = []
    const release = yield* Deferred.make<void>()
    let hold = true
    const batcher = yield* makeBatcher(
      (items: ReadonlyArray<number>) =>
        Effect.gen(function*() {
          batches.push(items)
          if (hold) yield* Deferred.await(release)
          if (items.includes(13)) return yield* Effect.fail("unlucky batch" as const)
          return items.map((item) => item % 2 === 0 ? Exit.succeed(item * 10) : Exit.fail(`odd ${item}` as const))
        }),
      options
    )
    return {
      batcher,
      batches,
      release: Effect.suspend(() => {
        hold = false
        return Deferred.succeed(release, undefined)
      })
    }
  })

describe("Batcher", () => {
  it.effect("a lone request runs at once; the ones arriving meanwhile share the next batch", () =>
    Effect.gen(function*() {
      const { batcher, batches, release } = yield* recordingBatcher({ maxBatch: 10, maxInFlight: 1 })
      const first = yield* Effect.forkChild(batcher.submit(2))
      yield* Effect.yieldNow
      const rest = yield* Effect.forkChild(Effect.forEach([4, 6, 7], (item) => Effect.result(batcher.submit(item)), {
        concurrency: "unbounded"
      }))
      // Turns enough for the three requests to arrive while the first batch is in flight.
      yield* Effect.repeat(Effect.yieldNow, { times: 5 })
      assert.deepStrictEqual(batches, [[2]], "only the first batch runs while it is in flight")
      yield* release
      assert.strictEqual(yield* Fiber.join(first), 20)
      const outcomes = yield* Fiber.join(rest)
      assert.deepStrictEqual(outcomes.map((outcome) => outcome._tag === "Success" ? outcome.success : outcome.failure), [40, 60, "odd 7"])
      assert.deepStrictEqual(batches, [[2], [4, 6, 7]])
    }))

  it.effect("at most maxBatch per batch, and up to maxInFlight batches at once", () =>
    Effect.gen(function*() {
      const { batcher, batches, release } = yield* recordingBatcher({ maxBatch: 2, maxInFlight: 2 })
      const all = yield* Effect.forkChild(Effect.forEach([2, 4, 6, 8, 10], (item) => batcher.submit(item), { concurrency: "unbounded" }))
      yield* Effect.repeat(Effect.yieldNow, { times: 20 })
      assert.strictEqual(batches.length, 2, "two batches in flight, the rest waiting")
      yield* release
      assert.deepStrictEqual(yield* Fiber.join(all), [20, 40, 60, 80, 100])
      assert.deepStrictEqual(batches.flat().sort((a, b) => a - b), [2, 4, 6, 8, 10], "each request in exactly one batch")
      assert.isTrue(batches.every((batch) => batch.length <= 2), JSON.stringify(batches))
    }))

  it.effect("a failed batch fails each of its requests, and only those", () =>
    Effect.gen(function*() {
      const { batcher, batches, release } = yield* recordingBatcher({ maxBatch: 10, maxInFlight: 1 })
      const first = yield* Effect.forkChild(batcher.submit(2))
      yield* Effect.yieldNow
      const unlucky = yield* Effect.forkChild(Effect.forEach([13, 4], (item) => Effect.result(batcher.submit(item)), { concurrency: "unbounded" }))
      yield* Effect.repeat(Effect.yieldNow, { times: 5 })
      yield* release
      assert.strictEqual(yield* Fiber.join(first), 20)
      const outcomes = yield* Fiber.join(unlucky)
      assert.deepStrictEqual(outcomes.map((outcome) => outcome._tag === "Failure" ? outcome.failure : outcome.success), ["unlucky batch", "unlucky batch"])
      assert.strictEqual(yield* batcher.submit(6), 60, "the batcher goes on after a failed batch")
      assert.deepStrictEqual(batches, [[2], [13, 4], [6]])
    }))
  it.effect("groupOf: no batch holds two groups' requests, and each group has its own batch in flight", () =>
    Effect.gen(function*() {
      const { batcher, batches, release } = yield* recordingBatcher({
        maxBatch: 10,
        maxInFlight: 1,
        groupOf: (item) => item >= 100 ? "b" : "a"
      })
      const firsts = yield* Effect.forkChild(Effect.forEach([2, 102], (item) => batcher.submit(item), { concurrency: "unbounded" }))
      yield* Effect.repeat(Effect.yieldNow, { times: 5 })
      assert.deepStrictEqual(batches, [[2], [102]], "one batch in flight per group, both at once")
      const rest = yield* Effect.forkChild(Effect.forEach([4, 104, 6, 106], (item) => batcher.submit(item), {
        concurrency: "unbounded"
      }))
      yield* Effect.repeat(Effect.yieldNow, { times: 5 })
      assert.strictEqual(batches.length, 2, "the rest wait for their group's batch in flight")
      yield* release
      assert.deepStrictEqual(yield* Fiber.join(firsts), [20, 1020])
      assert.deepStrictEqual(yield* Fiber.join(rest), [40, 1040, 60, 1060])
      assert.deepStrictEqual(batches.slice(2).map((batch) => [...batch].sort()).sort(), [[104, 106], [4, 6]])
    }))
})
