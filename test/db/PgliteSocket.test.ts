/**
 * The embedded database's socket under concurrency: parameterized queries from many connections never meet each
 * other's statements, and transactions from several connections serialize (a connection holds its turn while its
 * transaction is open; one that disconnects inside a transaction is rolled back). Named statements belong to the one
 * session, shared by every connection: each connection prepares them as on PostgreSQL, PGlite parses them once.
 */
import { PGlite } from "@electric-sql/pglite"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { servePglite } from "../../src/db/PgliteSocket.js"

const withServer = <A>(body: (connect: () => pg.Pool) => Promise<A>) =>
  Effect.promise(async () => {
    const dir = mkdtempSync(join(tmpdir(), "arbiter-socket-"))
    const db = await PGlite.create()
    const server = await servePglite(db, { path: join(dir, ".s.PGSQL.5432") })
    const pools: Array<pg.Pool> = []
    try {
      return await body(() => {
        const pool = new pg.Pool({ host: dir, port: 5432, user: "postgres", database: "postgres", max: 4 })
        pools.push(pool)
        return pool
      })
    } finally {
      await Promise.all(pools.map((pool) => pool.end()))
      await server.stop()
      await db.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

describe("PgliteSocket", () => {
  it.live("parameterized queries from 12 connections each get their own answer", () =>
    Effect.gen(function*() {
      const mismatches = yield* withServer(async (connect) => {
        const pools = [connect(), connect(), connect()]
        const results = await Promise.all(
          Array.from({ length: 600 }, (_, i) =>
            pools[i % 3]!.query<{ doubled: number; text: string }>(
              "SELECT $1::int * 2 AS doubled, repeat($2::text, 500) AS text",
              [i, String(i % 10)]
            ).then((result) => ({ i, row: result.rows[0]! })))
        )
        return results.filter(({ i, row }) => row.doubled !== i * 2 || row.text !== String(i % 10).repeat(500)).length
      })
      assert.strictEqual(mismatches, 0)
    }), { timeout: 60_000 })

  it.live("transactions from several connections serialize; a disconnect inside one rolls it back", () =>
    Effect.gen(function*() {
      const [count, rolledBack] = yield* withServer(async (connect) => {
        const pool = connect()
        await pool.query("CREATE TABLE counter (n int NOT NULL); INSERT INTO counter VALUES (0)")
        const pools = [pool, connect(), connect()]
        await Promise.all(Array.from({ length: 150 }, async (_, i) => {
          const client = await pools[i % 3]!.connect()
          try {
            await client.query("BEGIN")
            const { rows } = await client.query<{ n: number }>("SELECT n FROM counter FOR UPDATE")
            await client.query("UPDATE counter SET n = $1", [rows[0]!.n + 1])
            await client.query("COMMIT")
          } finally {
            client.release()
          }
        }))
        const lonely = new pg.Client({ host: (pool as any).options.host, port: 5432, user: "postgres", database: "postgres" })
        await lonely.connect()
        await lonely.query("BEGIN")
        await lonely.query("UPDATE counter SET n = n + 1000")
        await lonely.end()
        const { rows } = await pool.query<{ n: number }>("SELECT n FROM counter")
        return [rows[0]!.n, rows[0]!.n < 1000] as const
      })
      assert.strictEqual(count, 150)
      assert.isTrue(rolledBack)
    }), { timeout: 60_000 })

  it.live("a named statement prepared by one connection serves every other; its text under another name stays apart", () =>
    Effect.gen(function*() {
      const outcome = yield* withServer(async (connect) => {
        const pools = [connect(), connect(), connect()]
        const double = { name: "double", text: "SELECT $1::int * 2 AS n" }
        const answers = await Promise.all(Array.from({ length: 60 }, (_, i) =>
          pools[i % 3]!.query<{ n: number }>({ ...double, values: [i] }).then((result) => result.rows[0]!.n === i * 2)))
        const prepared = await pools[0]!.query<{ name: string; calls: number }>(
          "SELECT name, (generic_plans + custom_plans)::int AS calls FROM pg_prepared_statements WHERE name = 'double'")
        // A new connection's Parse of another text under a name the session holds is refused, as PostgreSQL refuses
        // it on one connection; the name keeps its statement.
        const fresh = connect()
        const clash = await fresh.query({ name: "double", text: "SELECT $1::int * 3 AS n", values: [1] })
          .then(() => "answered", (error: { code?: string }) => error.code)
        const triple = await pools[2]!.query<{ n: number }>({ name: "triple", text: "SELECT $1::int * 3 AS n", values: [5] })
        const afterClash = await fresh.query<{ n: number }>({ ...double, values: [4] })
        return {
          answers: answers.every(Boolean),
          prepared: prepared.rows,
          clash,
          triple: triple.rows[0]!.n,
          afterClash: afterClash.rows[0]!.n
        }
      })
      assert.isTrue(outcome.answers)
      assert.deepStrictEqual(outcome.prepared, [{ name: "double", calls: 60 }])
      assert.strictEqual(outcome.clash, "42P05")
      assert.strictEqual(outcome.triple, 15)
      assert.strictEqual(outcome.afterClash, 8)
    }), { timeout: 60_000 })

  it.live("connections preparing one name at the same moment prepare it once, each answered", () =>
    Effect.gen(function*() {
      const outcome = yield* withServer(async (connect) => {
        const pool = connect()
        const clients = await Promise.all(Array.from({ length: 4 }, () => pool.connect()))
        try {
          // Every client is connected before any sends, so all four Parses arrive before the first is answered.
          const answers = await Promise.all(clients.map((client, i) =>
            client.query<{ n: number }>({ name: "together", text: "SELECT $1::int + 1 AS n", values: [i] })
              .then((result) => result.rows[0]!.n, (error: { code?: string }) => error.code)))
          return answers
        } finally {
          for (const client of clients) client.release()
        }
      })
      assert.deepStrictEqual(outcome, [1, 2, 3, 4])
    }), { timeout: 60_000 })

  it.live("a refused Parse prepares nothing: the next connection's Parse of the name runs", () =>
    Effect.gen(function*() {
      const outcome = yield* withServer(async (connect) => {
        const first = connect()
        const second = connect()
        const refused = await first.query({ name: "later", text: "SELECT n FROM not_yet", values: [] })
          .then(() => "answered", (error: { code?: string }) => error.code)
        await first.query("CREATE TABLE not_yet (n int); INSERT INTO not_yet VALUES (7)")
        const { rows } = await second.query<{ n: number }>({ name: "later", text: "SELECT n FROM not_yet", values: [] })
        return { refused, n: rows[0]!.n }
      })
      assert.deepStrictEqual(outcome, { refused: "42P01", n: 7 })
    }), { timeout: 60_000 })
})
