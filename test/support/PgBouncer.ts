/**
 * A PgBouncer of the test's own, in transaction mode, in front of the test PostgreSQL server: a temporary folder with
 * its configuration (every database name passed through to the same-named database, trust authentication for the
 * test's user, a free port), the process started in the foreground and stopped with the scope. PgBouncer refuses to
 * run as root, so under root it switches to `nobody` (`-u`), which must read its folder.
 */
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { accessSync, chmodSync, constants, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createConnection } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "../../bench/support/Processes.js"

/** The PgBouncer binary: `PGBOUNCER`, else Debian's. */
export const pgBouncerPath = (): string => process.env.PGBOUNCER ?? "/usr/sbin/pgbouncer"

/** Whether the PgBouncer binary is there to run. */
export const pgBouncerInstalled = (): boolean => {
  try {
    accessSync(pgBouncerPath(), constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** A running PgBouncer. */
export interface PgBouncer {
  readonly port: number
  /** `url` (a database on the PostgreSQL server behind it) with its host and port replaced by PgBouncer's. */
  readonly through: (url: string) => string
  /** What PgBouncer has written so far (its log goes to stderr). */
  readonly log: () => string
}

const quoted = (value: string) => `"${value.replaceAll("\"", "\"\"")}"`

const configuration = (server: URL, port: number, folder: string) =>
  [
    "[databases]",
    `* = host=${server.hostname} port=${server.port || "5432"}`,
    "[pgbouncer]",
    "listen_addr = 127.0.0.1",
    `listen_port = ${port}`,
    "unix_socket_dir =",
    "auth_type = trust",
    `auth_file = ${join(folder, "users.txt")}`,
    "admin_users = " + decodeURIComponent(server.username || "postgres"),
    "pool_mode = transaction",
    "max_client_conn = 400",
    "default_pool_size = 20",
    ""
  ].join("\n")

/** Resolves once something accepts connections on the port, failing when the process ends first or after 30 s. */
const accepting = (port: number, child: ChildProcess, log: () => string) =>
  new Promise<void>((resolve, reject) => {
    const deadline = Date.now() + 30_000
    const attempt = () => {
      if (child.exitCode !== null) return reject(new Error(`pgbouncer exited (${child.exitCode}):\n${log()}`))
      if (Date.now() > deadline) return reject(new Error(`pgbouncer did not listen within 30 s:\n${log()}`))
      const socket = createConnection({ host: "127.0.0.1", port })
      socket.once("connect", () => {
        socket.destroy()
        resolve()
      })
      socket.once("error", () => {
        socket.destroy()
        setTimeout(attempt, 50)
      })
    }
    attempt()
  })

/** PgBouncer in transaction mode in front of the server of `serverUrl`, for the scope. */
export const startPgBouncer = (serverUrl: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const server = new URL(serverUrl)
      const folder = mkdtempSync(join(tmpdir(), "arbiter-pgbouncer-"))
      chmodSync(folder, 0o755)
      const port = await freePort()
      writeFileSync(join(folder, "pgbouncer.ini"), configuration(server, port, folder), { mode: 0o644 })
      writeFileSync(join(folder, "users.txt"), `${quoted(decodeURIComponent(server.username || "postgres"))} ""\n`, {
        mode: 0o644
      })
      const asRoot = process.getuid?.() === 0 ? ["-u", "nobody"] : []
      const child = spawn(pgBouncerPath(), [...asRoot, join(folder, "pgbouncer.ini")], { stdio: ["ignore", "pipe", "pipe"] })
      let log = ""
      child.stdout!.on("data", (chunk) => (log += chunk))
      child.stderr!.on("data", (chunk) => (log += chunk))
      try {
        await accepting(port, child, () => log)
      } catch (error) {
        child.kill("SIGKILL")
        rmSync(folder, { recursive: true, force: true })
        throw error
      }
      const bouncer: PgBouncer = {
        port,
        through: (url) => {
          const via = new URL(url)
          via.hostname = "127.0.0.1"
          via.port = String(port)
          return via.toString()
        },
        log: () => log
      }
      return { bouncer, child, folder }
    }),
    ({ child, folder }) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          const done = () => {
            rmSync(folder, { recursive: true, force: true })
            resolve()
          }
          if (child.exitCode !== null || child.signalCode !== null) return done()
          child.once("exit", done)
          // SIGINT: PgBouncer's "safe shutdown" waits for clients; SIGTERM closes them at once.
          child.kill("SIGTERM")
        })
      )
  ).pipe(Effect.map(({ bouncer }) => bouncer))
