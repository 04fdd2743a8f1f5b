/**
 * `DATABASE_POOL_SIZE` is the connections one process opens at most, both pools together, so the connection budget
 * (instances x workers x pool) holds; through a transaction pooler (or for a small pool) one pool serves both.
 */
import { assert, describe, it } from "@effect/vitest"
import { poolSizes } from "../../src/db/PgPool.js"

describe("poolSizes", () => {
  it("splits a process's connections: a third (rounded up) for the asynchronous-commit writes, the rest for main", () => {
    for (const total of [6, 7, 10, 15, 16, 100]) {
      const sizes = poolSizes(total)
      assert.strictEqual(sizes.main + sizes.asyncCommit, total)
      assert.strictEqual(sizes.asyncCommit, Math.ceil(total / 3))
      assert.isAtLeast(sizes.asyncCommit, 2)
    }
    assert.deepStrictEqual(poolSizes(15), { main: 10, asyncCommit: 5 })
  })

  it("one pool for fewer than 6 connections, and through a transaction pooler", () => {
    assert.deepStrictEqual(poolSizes(2), { main: 2, asyncCommit: 0 })
    assert.deepStrictEqual(poolSizes(5), { main: 5, asyncCommit: 0 })
    assert.deepStrictEqual(poolSizes(10, "transaction"), { main: 10, asyncCommit: 0 })
  })
})
