/**
 * Forward-only migrations: the plain SQL files of `migrations/` (`NNNN_name.sql`), applied in order at start and by
 * `cli migrate`, recorded in `effect_sql_migrations`. Several processes starting at once (`WORKERS`, several
 * machines) take turns on one advisory lock, so each file is applied exactly once, and none fails on the migrator's
 * own table that another created an instant before (the migrator's lock of that table comes after its creation, too
 * late on an empty database).
 */
import * as Migrator from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"
import { Effect } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { shippedFile } from "../config/ProjectRoot.js"

/** The folder of the migration files shipped with the service. */
export const migrationsDir = shippedFile("migrations")

const FileName = /^(\d{4})_([a-z0-9_]+)\.sql$/

/** One migration file. */
export interface MigrationFile {
  readonly id: number
  readonly name: string
  readonly sql: string
}

/** Reads the migration files of a folder, in id order. */
export const readMigrations = (dir: string = migrationsDir): ReadonlyArray<MigrationFile> =>
  readdirSync(dir)
    .flatMap((file) => {
      const match = FileName.exec(file)
      return match === null ? [] : [{ id: Number(match[1]), name: match[2]!, sql: readFileSync(join(dir, file), "utf8") }]
    })
    .sort((a, b) => a.id - b.id)

const run = Migrator.make({})

/** The advisory lock the processes migrating one database take turns on ("Arbi"). */
const MigrationLock = 0x41726269

const applyFiles = (files: ReadonlyArray<MigrationFile>) =>
  run({
    loader: Effect.succeed(
      files.map((file) =>
        [file.id, file.name, Effect.succeed(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(file.sql)))] as const
      )
    )
  })

/**
 * Applies every migration not yet applied; returns the ones applied now. With `takeTurns` (PostgreSQL: other
 * processes may be migrating the same database) a connection of its own holds the advisory lock meanwhile (the
 * migrator runs its own transaction on another connection), and gives it back whatever happens. The lock is a
 * transaction lock held by a transaction left open until the migrations end, not a session lock: through a pooler in
 * transaction mode (PgBouncer), a session lock would stay with whichever server session ran it, and its unlock could
 * run on another; an open transaction keeps its server session for itself. The embedded database has one owner and
 * one session, and its tools may have a single connection: no lock there.
 */
export const migrate = (files: ReadonlyArray<MigrationFile> = readMigrations(), options: { readonly takeTurns?: boolean } = {}) =>
  options.takeTurns !== true
    ? applyFiles(files)
    : Effect.scoped(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const connection = yield* sql.reserve
      yield* Effect.acquireRelease(
        connection.execute("BEGIN", [], undefined),
        () => Effect.ignore(connection.execute("ROLLBACK", [], undefined))
      )
      yield* connection.execute("SELECT pg_advisory_xact_lock($1)", [MigrationLock], undefined)
      return yield* applyFiles(files)
    }))

/** The id of the newest migration recorded in the database (0 when none, or when the table is missing). */
export const appliedVersion = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [exists] = yield* sql<{ present: boolean }>`SELECT to_regclass('effect_sql_migrations') IS NOT NULL AS present`
  if (exists?.present !== true) return 0
  const [row] = yield* sql<{ version: number | null }>`SELECT max(migration_id) AS version FROM effect_sql_migrations`
  return row?.version ?? 0
})
