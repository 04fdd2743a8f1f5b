/**
 * Statements run as one transaction in one round trip (src/db/OneRoundTrip.ts, settlement's locks and statement):
 * each statement sees the ones before it, they commit together, a failure of a later one rolls back the earlier
 * ones, and a connection that has not prepared them yet runs them one by one between BEGIN and COMMIT. On
 * PostgreSQL, where each test gets a database of its own; the embedded database runs the same code in every run test
 * (its socket shares named statements across connections: test/db/PgliteSocket.test.ts).
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import type pg from "pg"
import { isDataError } from "../../src/db/Unavailable.js"
import { PgPools, pgClientLayer } from "../../src/db/PgPool.js"
import { transaction } from "../../src/db/LedgerSql.js"
import { inOneTransaction, type Step, stepsInTransaction } from "../../src/db/OneRoundTrip.js"
import { databaseMode, freshPostgresDatabase } from "../support/TestDatabase.js"

const insert = { name: "test_ort_insert", text: "INSERT INTO ort_items (id, tags, at) VALUES ($1, $2::text[], $3) RETURNING id" }
const count = { name: "test_ort_count", text: "SELECT count(*)::int AS items, max(cardinality(tags))::int AS tags FROM ort_items" }

/** A pool on a fresh database with the test's table, counting the queries its connections are given. */
const withPool = <A, E>(body: (pool: pg.Pool, queries: () => number) => Effect.Effect<A, E>) =>
  Effect.scoped(Effect.gen(function*() {
    const { url } = yield* freshPostgresDatabase
    const { main } = Context.get(yield* Layer.build(pgClientLayer({ url }, { max: 1 })), PgPools)
    yield* Effect.promise(() => main.query("CREATE TABLE ort_items (id int PRIMARY KEY, tags text[] NOT NULL, at timestamptz NOT NULL)"))
    let queries = 0
    main.on("connect", (client) => {
      const original = client.query.bind(client) as (...args: Array<unknown>) => unknown
      ;(client as unknown as { query: (...args: Array<unknown>) => unknown }).query = (...args) => {
        queries++
        return original(...args)
      }
    })
    // The first connection was made by the layer's check, before the hook: start from a new one.
    yield* Effect.promise(async () => {
      const client = await main.connect()
      client.release(true)
    })
    return yield* body(main, () => queries)
  }))

/** A failure carrying PostgreSQL's error (a unique violation here), which the service treats as a data error. */
const assertDataError = (exit: Exit.Exit<unknown, SqlError>) => {
  const reason = Exit.isFailure(exit) && exit.cause.reasons.length === 1 ? exit.cause.reasons[0]! : undefined
  if (reason?._tag === "Fail") {
    assert.isTrue(isDataError(reason.error), "a unique violation is a data error")
  } else {
    assert.fail(`expected a failure, got ${String(exit)}`)
  }
}

const steps = (id: number): ReadonlyArray<Step> => [
  { statement: insert, values: [id, ["a", "b,c", "d\"e"], new Date("2026-11-25T00:00:00Z")] },
  { statement: count, values: [] }
]

describe.skipIf(databaseMode() !== "postgres")("one transaction in one round trip (PostgreSQL)", () => {
  it.effect("a new connection goes one statement at a time, then the same steps go in one query; each sees the one before", () =>
    withPool((pool, queries) =>
      Effect.gen(function*() {
        const first = yield* inOneTransaction(pool, steps(1))
        assert.deepStrictEqual(first, [[{ id: 1 }], [{ items: 1, tags: 3 }]])
        assert.strictEqual(queries(), 4, "BEGIN, the two statements, COMMIT")
        const second = yield* inOneTransaction(pool, steps(2))
        assert.deepStrictEqual(second, [[{ id: 2 }], [{ items: 2, tags: 3 }]], "the count sees this transaction's insert")
        assert.strictEqual(queries(), 5, "one query for both statements and the commit")
        const [stored] = (yield* Effect.promise(() => pool.query("SELECT array_agg(id ORDER BY id) AS ids, min(tags) AS tags FROM ort_items"))).rows
        assert.deepStrictEqual(stored, { ids: [1, 2], tags: ["a", "b,c", "d\"e"] }, "committed, arrays mapped as pg maps them")
      })))

  it.effect("a later statement's failure rolls back the earlier ones; the error keeps PostgreSQL's code; the pool goes on", () =>
    withPool((pool) =>
      Effect.gen(function*() {
        yield* inOneTransaction(pool, steps(1))
        const failing: ReadonlyArray<Step> = [
          { statement: insert, values: [2, [], new Date()] },
          { statement: insert, values: [1, [], new Date()] }
        ]
        assertDataError(yield* Effect.exit(inOneTransaction(pool, failing)))
        const [after] = yield* inOneTransaction(pool, [{ statement: count, values: [] }])
        assert.deepStrictEqual(after, [{ items: 1, tags: 3 }], "the first insert of the failed transaction was rolled back")
      })))

  it.effect("inside an open transaction: prepared steps go in one query, stay uncommitted until COMMIT, and a failure is rolled back", () =>
    withPool((pool, queries) =>
      Effect.gen(function*() {
        // The first time prepares the statements one by one: BEGIN, two statements, COMMIT.
        yield* transaction(pool, (client) => stepsInTransaction(client, steps(1)))
        assert.strictEqual(queries(), 4)
        const rows = yield* transaction(pool, (client) =>
          Effect.gen(function*() {
            const inside = yield* stepsInTransaction(client, steps(2))
            // The Sync ended no transaction: the insert's transaction id is still this session's (a new transaction
            // would have none until it writes).
            const open = yield* Effect.promise(() =>
              client.query<{ open: boolean }>("SELECT pg_current_xact_id_if_assigned() IS NOT NULL AS open"))
            return { inside, open: open.rows[0]!.open }
          }))
        assert.deepStrictEqual(rows.inside, [[{ id: 2 }], [{ items: 2, tags: 3 }]], "the count sees the insert before it")
        assert.isTrue(rows.open, "still in the transaction the insert began")
        assert.strictEqual(queries(), 8, "four more: BEGIN, one query for both statements, the check, COMMIT")
        const failing: ReadonlyArray<Step> = [
          { statement: insert, values: [3, [], new Date()] },
          { statement: insert, values: [1, [], new Date()] },
          { statement: count, values: [] }
        ]
        assertDataError(yield* Effect.exit(transaction(pool, (client) => stepsInTransaction(client, failing))))
        const [after] = yield* inOneTransaction(pool, [{ statement: count, values: [] }])
        assert.deepStrictEqual(after, [{ items: 2, tags: 3 }], "the failed transaction's first insert was rolled back")
      })))
})
