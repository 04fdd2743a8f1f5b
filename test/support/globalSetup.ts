/**
 * Prepares, once per test run, a migrated template database that each test file copies instead of paying a cold
 * boot and the migrations: a PGlite data folder (embedded mode) or a PostgreSQL template database (when
 * `TEST_DATABASE_URL` is set). Both are keyed by a hash of the migration files, so a changed migration rebuilds them.
 */
import { Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import type { TestProject } from "vitest/node"
import { openEmbedded } from "../../src/db/Embedded.js"
import { migrate, readMigrations } from "../../src/db/Migrations.js"
import { pgClientLayer, type PgTarget } from "../../src/db/PgPool.js"

declare module "vitest" {
  export interface ProvidedContext {
    readonly databaseMode: "embedded" | "postgres"
    readonly pgliteTemplate: string
    readonly postgresTemplate: string
  }
}

const migrationsHash = () => {
  const hash = createHash("sha256")
  for (const file of readMigrations()) hash.update(`${file.id}:${file.name}:${file.sql}\n`)
  return hash.digest("hex").slice(0, 16)
}

const migrateTarget = (target: Effect.Effect<PgTarget, unknown, import("effect").Scope.Scope>) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(target, (resolved) =>
        migrate().pipe(Effect.provide(Layer.orDie(pgClientLayer(resolved, { max: 1 })))))
    )
  )

const preparePglite = async (hash: string) => {
  const root = join(tmpdir(), "arbiter-test-templates")
  const dir = join(root, `pglite-${hash}`)
  if (existsSync(join(dir, "pgdata", "PG_VERSION"))) return dir
  const building = join(root, `pglite-${hash}-${process.pid}`)
  rmSync(building, { recursive: true, force: true })
  mkdirSync(building, { recursive: true })
  await migrateTarget(openEmbedded(building))
  rmSync(join(building, "embedded.lock"), { force: true })
  rmSync(dir, { recursive: true, force: true })
  renameSync(building, dir)
  return dir
}

const preparePostgres = async (url: string, hash: string) => {
  const name = `arbiter_tpl_${hash}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  try {
    await admin.query("SELECT pg_advisory_lock(715517)")
    const exists = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])
    if (exists.rowCount === 0) {
      const building = `${name}_build`
      await admin.query(`DROP DATABASE IF EXISTS ${building}`)
      await admin.query(`CREATE DATABASE ${building}`)
      const target = new URL(url)
      target.pathname = `/${building}`
      await migrateTarget(Effect.succeed({ url: target.toString() }))
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`)
    }
  } finally {
    await admin.query("SELECT pg_advisory_unlock(715517)").catch(() => undefined)
    await admin.end()
  }
  return name
}

export default async function setup(project: TestProject) {
  const hash = migrationsHash()
  const url = process.env.TEST_DATABASE_URL
  if (url !== undefined && url !== "") {
    project.provide("databaseMode", "postgres")
    project.provide("postgresTemplate", await preparePostgres(url, hash))
    project.provide("pgliteTemplate", "")
  } else {
    project.provide("databaseMode", "embedded")
    project.provide("pgliteTemplate", await preparePglite(hash))
    project.provide("postgresTemplate", "")
  }
}
