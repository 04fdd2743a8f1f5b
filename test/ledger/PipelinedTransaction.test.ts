/**
 * The settlement's transaction on a pipelining pool (src/ledger/LedgerSql.ts `pipelinedTransaction`, PostgreSQL
 * only; the embedded database runs the same steps one after another): BEGIN, the statements and COMMIT are written at
 * once, each statement sees what the ones before it did, a statement PostgreSQL refuses rolls the whole back and
 * fails with its own error, and the connection serves the next transaction.
 */
import { SqlError } from "@effect/sql/SqlError"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer } from "effect"
import { PgPools, pgClientLayer, pipelinedPools } from "../../src/db/PgPool.js"
import { pipelinedTransaction } from "../../src/ledger/LedgerSql.js"
import { databaseMode, freshPostgresDatabase } from "../support/TestDatabase.js"

const create = { name: "test_pipe_create", text: "CREATE TABLE IF NOT EXISTS pipe_t (id int PRIMARY KEY, v int NOT NULL)" }
const insert = { name: "test_pipe_insert", text: "INSERT INTO pipe_t (id, v) VALUES ($1, $2) RETURNING id" }
const total = { name: "test_pipe_total", text: "SELECT COALESCE(sum(v), 0)::int AS total, count(*)::int AS n FROM pipe_t" }
const divide = { name: "test_pipe_divide", text: "SELECT 1 / $1::int AS q" }

describe.skipIf(databaseMode() !== "postgres")("pipelined ledger transactions (PostgreSQL)", () => {
  it.scopedLive("commits in order, rolls back on a refused statement with its error, and keeps serving", () =>
    Effect.gen(function*() {
      const database = yield* freshPostgresDatabase
      const { settle } = Context.get(yield* Layer.build(pgClientLayer({ url: database.url }, { max: 2 })), PgPools)
      assert.isTrue(pipelinedPools.has(settle), "the settlement's pool pipelines")

      const done = yield* pipelinedTransaction(settle, [
        { statement: create, values: [] },
        { statement: insert, values: [1, 10] },
        { statement: insert, values: [2, 20] },
        { statement: total, values: [] }
      ])
      // The last statement saw the two inserts before it, in the same transaction.
      assert.deepStrictEqual(done[3], [{ total: 30, n: 2 }])
      assert.deepStrictEqual(done[1], [{ id: 1 }])

      const refused = yield* Effect.exit(pipelinedTransaction(settle, [
        { statement: insert, values: [3, 30] },
        { statement: divide, values: [0] },
        { statement: insert, values: [4, 40] }
      ]))
      assert.isTrue(Exit.isFailure(refused))
      const error = Exit.isFailure(refused) ? refused.cause : undefined
      const failure = error?._tag === "Fail" ? error.error : undefined
      assert.instanceOf(failure, SqlError)
      assert.strictEqual(failure!.message, "ledger statement test_pipe_divide failed")
      assert.strictEqual((failure!.cause as { code?: string }).code, "22012")

      // Nothing of the refused transaction stayed, and both connections still serve (two at once).
      const after = yield* Effect.all([
        pipelinedTransaction(settle, [{ statement: total, values: [] }]),
        pipelinedTransaction(settle, [{ statement: insert, values: [5, 50] }, { statement: total, values: [] }])
      ], { concurrency: 2 })
      assert.deepStrictEqual(after[1][1], [{ total: 80, n: 3 }])
    }).pipe(Effect.scoped))
})
