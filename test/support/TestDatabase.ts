/**
 * A database of its own for each test file, copied from the run's migrated template: a PGlite data folder in a
 * fresh temporary directory (embedded mode) or a fresh PostgreSQL database (when `TEST_DATABASE_URL` is set).
 * Yields the settings that point the service at it; everything is removed when the scope closes.
 */
import { Effect, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { cpSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { inject } from "vitest"
import type { Settings } from "../../src/config/AppConfig.js"

/** Which database the tests run on. */
export const databaseMode = (): "embedded" | "postgres" => inject("databaseMode")

/** The URL of the PostgreSQL server the tests use (postgres mode only). */
export const postgresUrl = (): string => process.env.TEST_DATABASE_URL ?? ""

/** Runs one statement on the PostgreSQL server's own database (creating and dropping test databases). */
export const adminQuery = (text: string) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: postgresUrl() })
    await client.connect()
    try {
      await client.query(text)
    } finally {
      await client.end()
    }
  })

/** A fresh PostgreSQL database from the template; returns its URL. */
export const freshPostgresDatabase = Effect.acquireRelease(
  Effect.gen(function*() {
    const name = `arbiter_t_${randomBytes(6).toString("hex")}`
    yield* adminQuery(`CREATE DATABASE ${name} TEMPLATE ${inject("postgresTemplate")}`)
    const url = new URL(postgresUrl())
    url.pathname = `/${name}`
    return { name, url: url.toString() }
  }),
  ({ name }) => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).pipe(Effect.ignore)
)

/** A fresh embedded data folder holding a copy of the template; returns its path. */
export const freshEmbeddedDataDir = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = mkdtempSync(join(tmpdir(), "arbiter-t-"))
    cpSync(join(inject("pgliteTemplate"), "pgdata"), join(dir, "pgdata"), { recursive: true })
    return dir
  }),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const emptyDataDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "arbiter-t-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/** Settings pointing at a fresh database of the run's mode (and, on PostgreSQL, an empty DATA_DIR). */
export const freshDatabaseSettings = Effect.gen(function*() {
  if (databaseMode() === "postgres") {
    const { url } = yield* freshPostgresDatabase
    const dataDir = yield* emptyDataDir
    return { databaseUrl: Option.some(Redacted.make(url)), dataDir } satisfies Partial<Settings>
  }
  const dataDir = yield* freshEmbeddedDataDir
  return { databaseUrl: Option.none(), dataDir } satisfies Partial<Settings>
})
