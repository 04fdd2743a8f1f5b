/**
 * A first start without initdb. The build (scripts/build.mjs) makes, once, a PGlite data folder that was just
 * initialised and closed cleanly (initdb, then a shutdown checkpoint), `dist/embedded-template/pgdata`, stamped with
 * the PGlite that made it (version and the sizes of its binaries). A start that finds `DATA_DIR/pgdata` missing or
 * empty copies it there (into a side folder renamed into place, so an interrupted copy is never taken for a
 * database) and opens it as an existing database; the migrations then run as on any first start. The result is what
 * PGlite's own first start makes, which is no more than initdb in memory written out to the folder (only the
 * cluster's system identifier, drawn by initdb, is shared by the databases copied from one template), for 0.2 to
 * 0.7 s of copying (about 1,000 files, 40 MB) instead of about 3 s of initdb. A missing template, one made by another
 * PGlite, or a copy that fails falls back to PGlite's initdb, as before.
 */
import { PGlite } from "@electric-sql/pglite"
import {
  chmodSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync
} from "node:fs"
import { createRequire } from "node:module"
import { basename, dirname, join } from "node:path"
import { shippedFile } from "../config/ProjectRoot.js"

/**
 * Shared buffers of the embedded database. PostgreSQL's 128 MB default costs PGlite a third of a second of every
 * open (setting up the buffer pool in WebAssembly memory), and the
 * pages an embedded database works on fit in far less; larger data belongs on PostgreSQL (`DATABASE_URL`).
 */
const EmbeddedSharedBuffers = "32MB"

/** Opens the PGlite database in `pgdata`, running initdb when the folder holds none: the service and the template alike. */
export const openPglite = (pgdata: string): Promise<PGlite> =>
  PGlite.create(pgdata, {
    startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${EmbeddedSharedBuffers}`]
  })

/** Where the build puts the template (`dist/embedded-template`). */
export const templateDir: string = shippedFile("dist", "embedded-template")

const StampFile = "pglite.json"
const PgliteBinaries = ["pglite.wasm", "pglite.data", "initdb.wasm"]
const SeedingPrefix = "pgdata.seeding-"
const BuildingInfix = ".building-"

/**
 * The installed PGlite: its version and the sizes of its binaries. A data folder belongs to the PostgreSQL build
 * that initialised it, so a template from any other is not used.
 */
export const pgliteIdentity = (): string => {
  const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite")
  const dist = dirname(entry)
  const manifest = JSON.parse(readFileSync(join(dirname(dist), "package.json"), "utf8")) as { readonly version?: unknown }
  const sizes = PgliteBinaries.map((file) => `${file}:${statSync(join(dist, file)).size}`)
  return [`@electric-sql/pglite@${String(manifest.version)}`, ...sizes].join(" ")
}

/** Whether `template` holds an initialised data folder made by the installed PGlite. */
export const templateIsCurrent = (template: string = templateDir): boolean => {
  try {
    const stamp = JSON.parse(readFileSync(join(template, StampFile), "utf8")) as { readonly pglite?: unknown }
    return stamp.pglite === pgliteIdentity() && existsSync(join(template, "pgdata", "PG_VERSION"))
  } catch {
    return false
  }
}

/** Whether process `pid` runs (on this machine): a template build's or a database owner's. */
export const processIsAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Removes the side folders of template builds whose process died before renaming them into place. */
const removeAbandonedBuilds = (template: string): void => {
  const parent = dirname(template)
  const prefix = `${basename(template)}${BuildingInfix}`
  if (!existsSync(parent)) return
  for (const entry of readdirSync(parent)) {
    if (!entry.startsWith(prefix)) continue
    const pid = Number(entry.slice(prefix.length))
    if (!Number.isInteger(pid) || !processIsAlive(pid)) rmSync(join(parent, entry), { recursive: true, force: true })
  }
}

/**
 * Lets every user read a folder tree: the template ships with the service and is copied by whichever user runs it (a
 * container's own user is not the one that built it), while each copy gets the owner's modes alone (`copyTree`).
 */
const readableByAll = (dir: string): void => {
  chmodSync(dir, 0o755)
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) readableByAll(path)
    else chmodSync(path, 0o644)
  }
}

/**
 * Makes the template in `template` unless a current one is there: initdb in a side folder, a clean close, the stamp,
 * then a rename into place. Returns whether it was written.
 */
export const writeTemplate = async (template: string = templateDir): Promise<"current" | "written"> => {
  if (templateIsCurrent(template)) return "current"
  const identity = pgliteIdentity()
  removeAbandonedBuilds(template)
  const building = `${template}${BuildingInfix}${process.pid}`
  rmSync(building, { recursive: true, force: true })
  mkdirSync(building, { recursive: true })
  try {
    const db = await openPglite(join(building, "pgdata"))
    await db.close()
    readableByAll(join(building, "pgdata"))
    writeFileSync(join(building, StampFile), `${JSON.stringify({ pglite: identity })}\n`)
    rmSync(template, { recursive: true, force: true })
    renameSync(building, template)
  } finally {
    rmSync(building, { recursive: true, force: true })
  }
  return "written"
}

/** Copies a folder tree; every folder and file gets the owner's modes alone (a template in a read-only store included). */
const copyTree = (from: string, to: string): void => {
  mkdirSync(to, { mode: 0o700 })
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name)
    const target = join(to, entry.name)
    if (entry.isDirectory()) copyTree(source, target)
    else if (entry.isFile()) {
      copyFileSync(source, target, constants.COPYFILE_FICLONE)
      chmodSync(target, 0o600)
    } else throw new Error(`${source} is neither a file nor a folder`)
  }
}

const isMissingOrEmpty = (dir: string): boolean => !existsSync(dir) || readdirSync(dir).length === 0

/** What a start did before opening `DATA_DIR/pgdata`. */
export type Seeding =
  | { readonly _tag: "Existing" }
  | { readonly _tag: "Seeded" }
  | { readonly _tag: "NoTemplate" }
  | { readonly _tag: "Failed"; readonly cause: unknown }

/**
 * Gives a new embedded database its initialised data folder from the template: when `dataDir/pgdata` is missing or
 * empty and the template is current. The caller owns `dataDir` (its lock), so no other process is seeding it.
 */
export const seedFromTemplate = (dataDir: string, template: string = templateDir): Seeding => {
  for (const entry of readdirSync(dataDir)) {
    if (entry.startsWith(SeedingPrefix)) rmSync(join(dataDir, entry), { recursive: true, force: true })
  }
  const pgdata = join(dataDir, "pgdata")
  if (!isMissingOrEmpty(pgdata)) return { _tag: "Existing" }
  if (!templateIsCurrent(template)) return { _tag: "NoTemplate" }
  const seeding = join(dataDir, `${SeedingPrefix}${process.pid}`)
  try {
    copyTree(join(template, "pgdata"), seeding)
    if (existsSync(pgdata)) rmdirSync(pgdata)
    renameSync(seeding, pgdata)
    return { _tag: "Seeded" }
  } catch (cause) {
    rmSync(seeding, { recursive: true, force: true })
    return { _tag: "Failed", cause }
  }
}
