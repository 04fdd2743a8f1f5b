/**
 * Forward-only migrations: the plain SQL files of `migrations/` (`NNNN_name.sql`), applied in order at start and by
 * `cli migrate`, recorded in `effect_sql_migrations`. The migrator locks its table, so several processes starting at
 * once apply each file exactly once.
 */
import { Migrator, SqlClient } from "@effect/sql"
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

/** Applies every migration not yet applied; returns the ones applied now. */
export const migrate = (files: ReadonlyArray<MigrationFile> = readMigrations()) =>
  run({
    loader: Effect.succeed(
      files.map((file) =>
        [file.id, file.name, Effect.succeed(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(file.sql)))] as const
      )
    )
  })

/** The id of the newest migration recorded in the database (0 when none, or when the table is missing). */
export const appliedVersion = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [exists] = yield* sql<{ present: boolean }>`SELECT to_regclass('effect_sql_migrations') IS NOT NULL AS present`
  if (exists?.present !== true) return 0
  const [row] = yield* sql<{ version: number | null }>`SELECT max(migration_id) AS version FROM effect_sql_migrations`
  return row?.version ?? 0
})
