/**
 * Runs the operator CLI as a child process, the way an operator does, pointed at the test server's database (its
 * `DATABASE_URL`, or its embedded `DATA_DIR`, reached through the running server's socket).
 */
import { Effect, Option, Redacted } from "effect"
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { AppConfig } from "../../src/AppConfig.js"

const root = fileURLToPath(new URL("../../", import.meta.url))

/** What a CLI run printed and how it ended. */
export interface CliResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
  readonly json: () => any
}

/** Runs `cli <args>` against the current test database. */
export const runCli = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const env: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" }
    if (Option.isSome(config.databaseUrl)) env.DATABASE_URL = Redacted.value(config.databaseUrl.value)
    else env.DATA_DIR = config.dataDir
    return yield* Effect.async<CliResult>((resume) => {
      execFile(process.execPath, ["--import", "tsx", "src/cli.ts", ...args], { cwd: root, env, timeout: 60_000 }, (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
        resume(Effect.succeed({ code, stdout, stderr, json: () => JSON.parse(stdout) }))
      })
    })
  })
