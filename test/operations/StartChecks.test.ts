/**
 * Configuration before the database, on the compiled server and CLI: every setting is checked before any connection
 * or migration, each problem printed on a line of its own naming the setting and what it must be, no stack trace, exit
 * code 78; and `MIGRATIONS=off`: a server on an empty database answers `/readyz` 503 (and every API request
 * `503 database_unavailable`) until `arbiter migrate` has run, then serves without a restart.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import { mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { startNode } from "../../bench/support/Processes.js"
import { ExitConfig, settingsProblems } from "../../src/config/SettingsCheck.js"
import { compiled, ensureCompiled, runCompiled } from "../support/Compiled.js"
import { rawRequest } from "../support/RawHttp.js"
import { adminQuery, databaseMode, postgresUrl } from "../support/TestDatabase.js"

/** An empty database of the run's mode, removed at the end: a PostgreSQL database made here, or an empty DATA_DIR. */
const emptyDatabase = Effect.acquireRelease(
  Effect.gen(function*() {
    const dataDir = mkdtempSync(join(tmpdir(), "arbiter-start-"))
    if (databaseMode() !== "postgres") return { env: { DATA_DIR: dataDir }, dataDir, name: undefined }
    const name = `arbiter_empty_${randomBytes(6).toString("hex")}`
    yield* adminQuery(`CREATE DATABASE ${name}`)
    const url = new URL(postgresUrl())
    url.pathname = `/${name}`
    return { env: { DATABASE_URL: url.toString(), DATA_DIR: dataDir, BILLING_PROVIDER: "local" }, dataDir, name }
  }),
  ({ dataDir, name }) =>
    Effect.andThen(
      Effect.sync(() => rmSync(dataDir, { recursive: true, force: true })),
      name === undefined ? Effect.void : Effect.ignore(adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    )
)

/** The tables of a PostgreSQL database (none in a database nothing has migrated). */
const tablesOf = (url: string) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      const result = await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'"
      )
      return result.rows[0]!.n
    } finally {
      await client.end()
    }
  })

/** Asserts that a run was refused for its settings: exit 78, one `invalid setting` line per setting, no stack. */
const assertRefused = (ran: { code: number | null; stderr: string; stdout: string }, settings: ReadonlyArray<string>) => {
  assert.strictEqual(ran.code, ExitConfig, ran.stderr)
  const lines = ran.stderr.trimEnd().split("\n")
  assert.strictEqual(lines.length, settings.length, ran.stderr)
  settings.forEach((setting, index) => assert.match(lines[index]!, new RegExp(`^invalid setting ${setting}\\b`), ran.stderr))
  assert.notMatch(ran.stderr, /\n\s+at |ENOTFOUND|Error:/, "no stack trace, no driver error")
  assert.strictEqual(ran.stdout, "")
}

describe("settings checked before the database", () => {
  it("every problem is found, each on its own line, and no secret is shown", () => {
    const problems = settingsProblems({
      serving: true,
      env: {
        DATABASE_URL: "postgres://user:s3cret@",
        PORT: "eighty",
        WORKERS: "0",
        MIGRATIONS: "sometimes",
        SHUTDOWN_DRAIN_MS: "-5",
        BILLING_PROVIDER: "paypal"
      }
    })
    assert.deepStrictEqual(problems, [
      `invalid setting PORT="eighty": must be a port number, 1 to 65535`,
      "invalid setting DATABASE_URL (value hidden): must be postgres://USER:PASSWORD@HOST:PORT/DATABASE, or unset for the embedded database",
      `invalid setting BILLING_PROVIDER="paypal": expected "local" | "stripe"`,
      `invalid setting MIGRATIONS="sometimes": expected "auto" | "off"`,
      `invalid setting SHUTDOWN_DRAIN_MS="-5": must be 0 to 600000 (ms)`,
      `invalid setting WORKERS="0": must be a whole number, 1 to 256 (or unset: one per CPU)`
    ])
    assert.deepStrictEqual(settingsProblems({ serving: true, env: {} }), [])
    assert.deepStrictEqual(settingsProblems({ serving: false, env: { DATABASE_URL: "postgresql://db.internal/arbiter" } }), [])
    assert.deepStrictEqual(settingsProblems({ serving: true, env: { DATABASE_URL: "postgres:///arbiter?host=/run/postgresql", BILLING_PROVIDER: "stripe", STRIPE_SECRET_KEY: "sk", STRIPE_WEBHOOK_SECRET: "wh" } }), [])
  })

  it.live("the compiled server: DATABASE_URL=not-a-url is one line, exit 78, no connection tried", () =>
    Effect.gen(function*() {
      yield* ensureCompiled
      const ran = yield* runCompiled(compiled.main, [], { DATABASE_URL: "not-a-url", PORT: "abc", LOG_LEVEL: "loud" })
      assertRefused(ran, ["PORT", "DATABASE_URL", "LOG_LEVEL"])
      assert.notInclude(ran.stderr, "not-a-url", "the URL's value stays hidden")
    }), { timeout: 600_000 })

  it.live("the compiled server: an unknown BILLING_PROVIDER is refused before any migration", () =>
    Effect.gen(function*() {
      yield* ensureCompiled
      const database = yield* emptyDatabase
      const ran = yield* runCompiled(compiled.main, [], { ...database.env, BILLING_PROVIDER: "paypal", WORKERS: "2" })
      assertRefused(ran, ["BILLING_PROVIDER"])
      if (database.env.DATABASE_URL !== undefined) assert.strictEqual(yield* tablesOf(database.env.DATABASE_URL), 0)
      assert.deepStrictEqual(readdirSync(database.dataDir), [], "nothing was created in DATA_DIR")
    }).pipe(Effect.scoped), { timeout: 600_000 })

  it.live("the compiled server on PostgreSQL without BILLING_PROVIDER: refused before any migration", () =>
    Effect.gen(function*() {
      if (databaseMode() !== "postgres") return
      yield* ensureCompiled
      const database = yield* emptyDatabase
      const { BILLING_PROVIDER: _chosen, ...env } = database.env as Record<string, string>
      assertRefused(yield* runCompiled(compiled.main, [], env), ["BILLING_PROVIDER"])
      assert.strictEqual(yield* tablesOf(env.DATABASE_URL!), 0)
    }).pipe(Effect.scoped), { timeout: 600_000 })

  it.live("the compiled server: a database that refuses the connection is one line, exit 1, no stack trace", () =>
    Effect.gen(function*() {
      yield* ensureCompiled
      const ran = yield* runCompiled(compiled.main, [], {
        DATABASE_URL: "postgres://arbiter@127.0.0.1:1/arbiter",
        BILLING_PROVIDER: "local",
        WORKERS: "1"
      })
      assert.strictEqual(ran.code, 1, ran.stderr)
      const lines = `${ran.stdout}${ran.stderr}`.trimEnd().split("\n")
      assert.strictEqual(lines.length, 1, lines.join("\n"))
      assert.include(lines[0]!, "could not connect to the database: connect ECONNREFUSED 127.0.0.1:1")
      assert.include(lines[0]!, "check DATABASE_URL")
    }), { timeout: 600_000 })

  it.live("the compiled CLI: settings refused before the command connects", () =>
    Effect.gen(function*() {
      yield* ensureCompiled
      const ran = yield* runCompiled(compiled.cli, ["migrate"], { DATABASE_URL: "not-a-url", DATABASE_POOL_SIZE: "0" })
      assertRefused(ran, ["DATABASE_URL", "DATABASE_POOL_SIZE"])
    }), { timeout: 600_000 })
})

describe("MIGRATIONS=off", () => {
  it.live("an empty database: /readyz 503 until `arbiter migrate` runs, then 200 without a restart", () =>
    Effect.gen(function*() {
      yield* ensureCompiled
      const database = yield* emptyDatabase
      const env = { ...database.env, MIGRATIONS: "off", WORKERS: "1", LOG_LEVEL: "info" }
      const server = yield* Effect.acquireRelease(
        Effect.promise(() => startNode(compiled.main, env, "/healthz")),
        (child) => Effect.promise(child.stop)
      )
      const readyz = rawRequest(server.url, { path: "/readyz", headers: { "x-request-id": "probe-1" } })
      const waiting = yield* readyz
      assert.strictEqual(waiting.status, 503)
      assert.deepStrictEqual(waiting.json(), { status: "unavailable", checks: { database: "ok", migrations: "pending" } })
      assert.strictEqual(waiting.headers["x-request-id"], "probe-1")
      const api = yield* rawRequest(server.url, { path: "/v1/keys", headers: { authorization: "Bearer ak_x" } })
      assert.strictEqual(api.status, 503)
      assert.strictEqual(api.json().error.code, "database_unavailable")
      assert.match(String(api.headers["x-request-id"]), /^req_[0-9a-f]{32}$/)
      assert.strictEqual((yield* rawRequest(server.url, { path: "/healthz" })).status, 200)
      // Nothing migrated while the server waited.
      if (database.name !== undefined) assert.strictEqual(yield* tablesOf(database.env.DATABASE_URL!), 0)

      const migrated = yield* runCompiled(compiled.cli, ["migrate"], database.env)
      assert.strictEqual(migrated.code, 0, migrated.stderr)
      assert.isAbove(JSON.parse(migrated.stdout).applied.length, 0)
      // The server asks the database every second; the bound only guards a hang. A refused connection is the instant
      // the waiting responder hands the port to the server (src/server/SchemaGate.ts); every answer is 503 until 200.
      const answers: Array<number> = []
      const ready = yield* readyz.pipe(
        Effect.option,
        Effect.tap((answer) => Effect.sync(() => answers.push(answer._tag === "Some" ? answer.value.status : 0))),
        Effect.repeat({
          schedule: Schedule.spaced("200 millis"),
          until: (answer) => answer._tag === "Some" && answer.value.status === 200
        }),
        Effect.timeout("120 seconds")
      )
      assert.deepStrictEqual(Option.getOrThrow(ready).json(), { status: "ready", checks: { database: "ok", migrations: "applied" } })
      assert.deepStrictEqual([...new Set(answers.slice(0, -1).filter((status) => status !== 0))].filter((status) => status !== 503), [])
      assert.include(server.output(), "MIGRATIONS=off: waiting for `arbiter migrate`")
      assert.notMatch(server.output(), /applied \d+ migrations/)
    }).pipe(Effect.scoped), { timeout: 600_000 })
})
