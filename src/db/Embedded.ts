/**
 * The embedded default database: PGlite (PostgreSQL compiled to WebAssembly) persisted in `DATA_DIR/pgdata` (a new
 * one copied from the build's initialised template when there is a current one, EmbeddedTemplate.ts), served
 * (PgliteSocket) to the same `pg` client the PostgreSQL mode uses through a PostgreSQL-protocol socket at
 * `DATA_DIR/.s.PGSQL.5432` (TCP on 127.0.0.1 when that path is too long for a Unix socket). One process owns the
 * files; `DATA_DIR/embedded.lock` names it and its socket, so the operator CLI can work through a running server
 * instead of opening the files a second time.
 */
import { Data, Effect } from "effect"
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { connect } from "node:net"
import { openPglite, processIsAlive, seedFromTemplate } from "./EmbeddedTemplate.js"
import { servePglite } from "./PgliteSocket.js"
import { toSqlError } from "./SqlErrors.js"
import { join, resolve } from "node:path"

/** Another live process owns the embedded database files. */
export class EmbeddedDatabaseBusy extends Data.TaggedError("EmbeddedDatabaseBusy")<{
  readonly message: string
  readonly owner: Owner
}> {}

/** Where the owning process serves the database. */
export interface Owner {
  readonly pid: number
  readonly host?: string
  readonly port?: number
}

/** A connection target for the `pg` client. */
export interface SocketTarget {
  readonly host: string
  readonly port: number
  readonly database: string
  readonly user: string
}

const lockPath = (dataDir: string) => join(dataDir, "embedded.lock")
const MaxUnixPath = 100

const socketAnswers = (owner: Owner): Promise<boolean> =>
  new Promise((resolveAnswer) => {
    if (owner.host === undefined || owner.port === undefined) return resolveAnswer(false)
    const socket = owner.host.startsWith("/")
      ? connect(join(owner.host, `.s.PGSQL.${owner.port}`))
      : connect(owner.port, owner.host)
    const done = (answer: boolean) => {
      socket.destroy()
      resolveAnswer(answer)
    }
    socket.setTimeout(1_000, () => done(false))
    socket.once("connect", () => done(true))
    socket.once("error", () => done(false))
  })

const readOwner = (dataDir: string): Owner | undefined => {
  try {
    return JSON.parse(readFileSync(lockPath(dataDir), "utf8")) as Owner
  } catch {
    return undefined
  }
}

const liveOwner = async (dataDir: string): Promise<Owner | undefined> => {
  for (let attempt = 0; attempt < 120; attempt++) {
    const owner = readOwner(dataDir)
    if (owner === undefined || !processIsAlive(owner.pid)) return undefined
    if (owner.pid === process.pid) return owner
    if (owner.host !== undefined) return (await socketAnswers(owner)) ? owner : undefined
    await new Promise((wake) => setTimeout(wake, 250))
  }
  return undefined
}

/** Finds another live process serving the files (waiting briefly for one still starting); undefined when none. */
export const findOwner = (dataDir: string) =>
  Effect.promise(async () => {
    const owner = await liveOwner(dataDir)
    return owner === undefined || owner.pid === process.pid ? undefined : owner
  })

const claim = (dataDir: string) =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const fd = openSync(lockPath(dataDir), "wx", 0o600)
        writeFileSync(fd, JSON.stringify({ pid: process.pid }))
        closeSync(fd)
        return
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      }
      const owner = yield* Effect.promise(() => liveOwner(dataDir))
      if (owner !== undefined) {
        return yield* new EmbeddedDatabaseBusy({
          owner,
          message: `the embedded database in ${dataDir} is in use by process ${owner.pid}; stop it or set another DATA_DIR`
        })
      }
      rmSync(lockPath(dataDir), { force: true })
    }
    return yield* Effect.die(new Error(`could not claim ${lockPath(dataDir)}`))
  })

/** Gives a new database the template's initialised folder when it can, and says how a new database began. */
const seed = (dir: string) =>
  Effect.flatMap(Effect.sync(() => seedFromTemplate(dir)), (seeding) => {
    switch (seeding._tag) {
      case "Existing":
        return Effect.void
      case "Seeded":
        return Effect.logInfo("new embedded database: copied the initialised template (no initdb)")
      case "NoTemplate":
        return Effect.logInfo("new embedded database: no template from this PGlite (npm run build makes one); running initdb")
      case "Failed":
        return Effect.logWarning("new embedded database: could not copy the template; running initdb", seeding.cause)
    }
  })

/** Opens PGlite in `dataDir` and serves it on a socket for the life of the scope; returns the target. */
export const openEmbedded = (dataDir: string) =>
  Effect.gen(function*() {
    const dir = resolve(dataDir)
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    yield* Effect.acquireRelease(claim(dir), () => Effect.sync(() => rmSync(lockPath(dir), { force: true })))
    yield* seed(dir)
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => openPglite(join(dir, "pgdata")),
        catch: (cause) => toSqlError(cause, `could not open the embedded database in ${dir}`)
      }),
      (db) => Effect.ignore(Effect.tryPromise(() => db.close()))
    )
    const unix = join(dir, ".s.PGSQL.5432")
    const useUnix = unix.length <= MaxUnixPath
    if (useUnix && existsSync(unix)) rmSync(unix)
    const server = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => servePglite(db, useUnix ? { path: unix } : { host: "127.0.0.1", port: 0 }),
        catch: (cause) => toSqlError(cause, "could not serve the embedded database")
      }),
      (server) => Effect.ignore(Effect.tryPromise(() => server.stop()))
    )
    const address = server.address()
    const target: SocketTarget = useUnix || typeof address === "string"
      ? { host: dir, port: 5432, database: "postgres", user: "postgres" }
      : { host: "127.0.0.1", port: address.port, database: "postgres", user: "postgres" }
    writeFileSync(lockPath(dir), JSON.stringify({ pid: process.pid, host: target.host, port: target.port }), {
      mode: 0o600
    })
    return target
  })

/** The target of the process serving the files, for tools that run beside a server. */
export const ownerTarget = (owner: Owner): SocketTarget => ({
  host: owner.host!,
  port: owner.port!,
  database: "postgres",
  user: "postgres"
})
