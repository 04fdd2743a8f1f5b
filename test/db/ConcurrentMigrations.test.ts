/**
 * Several processes starting at once on an empty PostgreSQL database (`WORKERS`, or several machines) each run the
 * migrations at start: they must take turns (src/db/Migrations.ts), so every file is applied once and no process
 * fails on a table another one created an instant before.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { randomBytes } from "node:crypto"
import { pgClientLayer } from "../../src/db/PgPool.js"
import { migrate, readMigrations } from "../../src/db/Migrations.js"
import { adminQuery, databaseMode, postgresUrl } from "../support/TestDatabase.js"

/** An empty database (no migration applied), dropped afterwards. */
const emptyDatabase = Effect.acquireRelease(
  Effect.gen(function*() {
    const name = `arbiter_m_${randomBytes(6).toString("hex")}`
    yield* adminQuery(`CREATE DATABASE ${name} TEMPLATE template0`)
    const url = new URL(postgresUrl())
    url.pathname = `/${name}`
    return { name, url: url.toString() }
  }),
  ({ name }) => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).pipe(Effect.ignore)
)

describe.skipIf(databaseMode() !== "postgres")("migrations started at once (PostgreSQL)", () => {
  it.live("four clients migrating an empty database together apply every file once, and none fails", () =>
    Effect.gen(function*() {
      const database = yield* emptyDatabase
      const clients = yield* Effect.forEach(Array.from({ length: 4 }), () =>
        Effect.map(Layer.build(pgClientLayer({ url: database.url }, { max: 2 })), (context) =>
          Context.get(context, SqlClient.SqlClient)))
      const applied = yield* Effect.forEach(
        clients,
        (sql) => Effect.provideService(migrate(undefined, { takeTurns: true }), SqlClient.SqlClient, sql),
        { concurrency: "unbounded" }
      )
      const files = readMigrations()
      assert.strictEqual(applied.reduce((sum, each) => sum + each.length, 0), files.length, "each file applied by one client")
      const [row] = yield* clients[0]!<{ n: number }>`SELECT count(*)::int AS n FROM effect_sql_migrations`
      assert.strictEqual(row!.n, files.length)
    }))
})
