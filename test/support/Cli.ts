/**
 * Runs the operator CLI pointed at the test server's database, the way an operator does: with only `DATABASE_URL`,
 * or the embedded `DATA_DIR` (reached through the running server's socket), in its environment.
 *
 * `runCli` runs the command line in this process (the CLI's own `runCli`, with stdout and stderr captured and its
 * settings read from that two-variable environment alone); `runCliProcess` runs it as a child process
 * (`node --import tsx src/cli.ts`), for what only a real process shows: its exit code, its pipes, its own discovery
 * of the server that owns the embedded files.
 */
import { NodeServices } from "@effect/platform-node"
import { ConfigProvider, Console, Effect, Layer, Option, Redacted } from "effect"
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { format } from "node:util"
import { AppConfig, type Settings } from "../../src/config/AppConfig.js"
import { type CliOutput, CliDatabase, runCli as runCliInProcess } from "../../src/cli.js"
import { type Owner, ownerTarget } from "../../src/db/Embedded.js"
import { pgClientLayer } from "../../src/db/PgPool.js"
import { DatabaseKind } from "../../src/db/Sql.js"

const root = fileURLToPath(new URL("../../", import.meta.url))

/** What a CLI run printed and how it ended. */
export interface CliResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
  readonly json: () => any
}

/** The environment an operator's CLI gets for the test server's database. */
const cliEnvironment = (config: Settings): Record<string, string> =>
  Option.isSome(config.databaseUrl)
    ? { DATABASE_URL: Redacted.value(config.databaseUrl.value) }
    : { DATA_DIR: config.dataDir }

/** A console writing into two strings, as the process's stdout and stderr would receive them. */
const capturingConsole = (base: Console.Console) => {
  const output = { stdout: "", stderr: "" }
  const toStdout = (...args: ReadonlyArray<unknown>) => void (output.stdout += `${format(...args)}\n`)
  const toStderr = (...args: ReadonlyArray<unknown>) => void (output.stderr += `${format(...args)}\n`)
  const console: Console.Console = { ...base, log: toStdout, info: toStdout, debug: toStdout, error: toStderr, warn: toStderr }
  return { console, output }
}

/**
 * The CLI's database inside the test server's process: the embedded server's socket (named in its lock file) that
 * a separate CLI process finds by itself, or, on PostgreSQL, the CLI's default.
 */
const databaseFor = (config: Settings) =>
  Option.isSome(config.databaseUrl)
    ? Effect.succeed(Option.none())
    : Effect.sync(() => {
      const owner = JSON.parse(readFileSync(join(config.dataDir, "embedded.lock"), "utf8")) as Owner
      return Option.some(Layer.merge(pgClientLayer(ownerTarget(owner), { max: 1 }), Layer.succeed(DatabaseKind, "embedded")))
    })

/**
 * Runs `cli <args>` in this process with the environment `env` alone (and, when given, the database the commands
 * use); `output` says which streams are terminals.
 */
export const runCliWith = (
  env: Record<string, string>,
  args: ReadonlyArray<string>,
  output: CliOutput = { stdoutIsTerminal: false, stderrIsTerminal: false, noColor: undefined },
  database: Option.Option<CliDatabase["Service"]> = Option.none()
) =>
  Effect.gen(function*() {
    const { console, output: captured } = capturingConsole(yield* Console.Console)
    const run = runCliInProcess(args, output).pipe(
      Effect.provide(AppConfig.layer),
      Effect.provide(NodeServices.layer),
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })),
      Effect.provideService(Console.Console, console)
    )
    // A memo map of its own, as the CLI's own process has: layers the test's server already built (its settings, its
    // SQL client) are built again from this environment, not shared with the command.
    const memoMap = yield* Layer.makeMemoMap
    const code = yield* Option.match(database, {
      onNone: () => run,
      onSome: (layer) => Effect.provideService(run, CliDatabase, layer)
    }).pipe(Effect.provideService(Layer.CurrentMemoMap, memoMap))
    return { code, stdout: captured.stdout, stderr: captured.stderr, json: () => JSON.parse(captured.stdout) } satisfies CliResult
  })

/** Runs `cli <args>` in this process against the current test database; `output` says which streams are terminals. */
export const runCli = (args: ReadonlyArray<string>, output?: CliOutput) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    return yield* runCliWith(cliEnvironment(config), args, output, yield* databaseFor(config))
  })

/** Runs `cli <args>` as a child process whose environment is `env` (and PATH and HOME) alone. */
export const runCliProcessWith = (env: Record<string, string>, args: ReadonlyArray<string>) =>
  Effect.callback<CliResult>((resume) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "src/cli.ts", ...args],
      { cwd: root, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
        resume(Effect.succeed({ code, stdout, stderr, json: () => JSON.parse(stdout) }))
      }
    )
  })

/** Runs `cli <args>` as a child process against the current test database. */
export const runCliProcess = (args: ReadonlyArray<string>) =>
  Effect.flatMap(AppConfig, (config) => runCliProcessWith(cliEnvironment(config), args))
