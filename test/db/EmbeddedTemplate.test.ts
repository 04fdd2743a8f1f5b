/**
 * The embedded database's template (src/db/EmbeddedTemplate.ts): a new DATA_DIR is seeded with the initialised data
 * folder, which opens as an existing database and takes the migrations, even from a read-only template; an existing
 * folder, a template from another PGlite, a missing one and a copy that fails are all left to PGlite's initdb, with
 * nothing half-copied left behind.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { openPglite, pgliteIdentity, seedFromTemplate, templateIsCurrent, writeTemplate } from "../../src/db/EmbeddedTemplate.js"
import { readMigrations } from "../../src/db/Migrations.js"

const work = mkdtempSync(join(tmpdir(), "arbiter-template-"))
const template = join(work, "embedded-template")

const freshDataDir = () => mkdtempSync(join(work, "data-"))

const walk = (dir: string, visit: (path: string) => void) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    visit(path)
    if (entry.isDirectory()) walk(path, visit)
  }
}

/** Another template: a copy of the made one, which a test may spoil. */
const copyOfTemplate = (name: string) => {
  const copy = join(work, name)
  mkdirSync(copy)
  const seeded = seedFromTemplate(copy, template)
  assert.strictEqual(seeded._tag, "Seeded")
  writeFileSync(join(copy, "pglite.json"), readFileSync(join(template, "pglite.json")))
  return copy
}

describe("embedded database template", () => {
  beforeAll(async () => {
    assert.strictEqual(await writeTemplate(template), "written")
  }, 120_000)
  afterAll(() => rmSync(work, { recursive: true, force: true }))

  it("is made once per PGlite, stamped with it", async () => {
    assert.isTrue(templateIsCurrent(template))
    assert.deepStrictEqual(JSON.parse(readFileSync(join(template, "pglite.json"), "utf8")), { pglite: pgliteIdentity() })
    assert.match(pgliteIdentity(), /^@electric-sql\/pglite@\d+\.\d+\.\d+ pglite\.wasm:\d+ pglite\.data:\d+ initdb\.wasm:\d+$/)
    assert.strictEqual(await writeTemplate(template), "current")
    assert.deepStrictEqual(readdirSync(work).filter((entry) => entry.includes(".building-")), [])
  })

  it("seeds a new data folder, which opens as a database (with smaller shared buffers) and takes the migrations", async () => {
    const dataDir = freshDataDir()
    mkdirSync(join(dataDir, "pgdata"))
    assert.strictEqual(seedFromTemplate(dataDir, template)._tag, "Seeded")
    assert.deepStrictEqual(readdirSync(dataDir), ["pgdata"])
    walk(join(dataDir, "pgdata"), (path) => {
      const stat = statSync(path)
      assert.strictEqual(stat.mode & 0o777, stat.isDirectory() ? 0o700 : 0o600, path)
    })
    const db = await openPglite(join(dataDir, "pgdata"))
    try {
      for (const migration of readMigrations()) await db.exec(migration.sql)
      const [row] = (await db.query<{ tables: number }>(
        "SELECT count(*)::int AS tables FROM pg_tables WHERE schemaname = 'public'"
      )).rows
      assert.isAbove(row!.tables, 0)
      const [settings] = (await db.query<{ encoding: string; user: string }>(
        "SELECT pg_encoding_to_char(encoding) AS encoding, current_user AS user FROM pg_database WHERE datname = current_database()"
      )).rows
      assert.deepStrictEqual(settings, { encoding: "UTF8", user: "postgres" })
      const [buffers] = (await db.query<{ shared_buffers: string }>("SHOW shared_buffers")).rows
      assert.strictEqual(buffers!.shared_buffers, "32MB", "not PostgreSQL's 128MB default, which slows every open")
    } finally {
      await db.close()
    }
  }, 60_000)

  it("seeds from a read-only template (an installed package's) into writable files", async () => {
    const readOnly = copyOfTemplate("read-only-template")
    walk(readOnly, (path) => chmodSync(path, statSync(path).isDirectory() ? 0o555 : 0o444))
    chmodSync(readOnly, 0o555)
    try {
      const dataDir = freshDataDir()
      assert.strictEqual(seedFromTemplate(dataDir, readOnly)._tag, "Seeded")
      walk(join(dataDir, "pgdata"), (path) => {
        const stat = statSync(path)
        assert.strictEqual(stat.mode & 0o777, stat.isDirectory() ? 0o700 : 0o600, path)
      })
      const db = await openPglite(join(dataDir, "pgdata"))
      try {
        await db.exec("CREATE TABLE written (id int); INSERT INTO written VALUES (1)")
        assert.deepStrictEqual((await db.query("SELECT id FROM written")).rows, [{ id: 1 }])
      } finally {
        await db.close()
      }
    } finally {
      chmodSync(readOnly, 0o755)
      walk(readOnly, (path) => chmodSync(path, statSync(path).isDirectory() ? 0o755 : 0o644))
    }
  }, 60_000)

  it("leaves an existing data folder alone", () => {
    const dataDir = freshDataDir()
    mkdirSync(join(dataDir, "pgdata"))
    writeFileSync(join(dataDir, "pgdata", "PG_VERSION"), "17\n")
    assert.strictEqual(seedFromTemplate(dataDir, template)._tag, "Existing")
    assert.deepStrictEqual(readdirSync(join(dataDir, "pgdata")), ["PG_VERSION"])
  })

  it("leaves a new data folder to initdb when the template is missing or from another PGlite", () => {
    const dataDir = freshDataDir()
    assert.strictEqual(seedFromTemplate(dataDir, join(work, "no-such-template"))._tag, "NoTemplate")
    const stale = copyOfTemplate("stale-template")
    writeFileSync(join(stale, "pglite.json"), JSON.stringify({ pglite: "@electric-sql/pglite@0.0.1" }))
    assert.isFalse(templateIsCurrent(stale))
    assert.strictEqual(seedFromTemplate(dataDir, stale)._tag, "NoTemplate")
    assert.deepStrictEqual(readdirSync(dataDir), [])
  })

  it("cleans up a copy that fails and one a dead process left, so initdb finds an empty folder", () => {
    const broken = copyOfTemplate("broken-template")
    symlinkSync("/dev/null", join(broken, "pgdata", "base", "not-a-file"))
    const dataDir = freshDataDir()
    mkdirSync(join(dataDir, "pgdata.seeding-4242"))
    const seeded = seedFromTemplate(dataDir, broken)
    assert.strictEqual(seeded._tag, "Failed")
    if (seeded._tag === "Failed") assert.include(String(seeded.cause), "neither a file nor a folder")
    assert.deepStrictEqual(readdirSync(dataDir), [])
    assert.isFalse(existsSync(join(dataDir, "pgdata")))
  })
})
