/**
 * The compiled service (`dist/main.mjs`, `dist/cli.mjs`) as an operator runs it: built first when stale (one build
 * at a time across test files, under a lock folder), then run as child processes with an environment of the test's
 * own (nothing of this process's leaks in but `PATH` and `HOME`).
 */
import { Effect } from "effect"
import { execFile, spawn } from "node:child_process"
import { mkdirSync, rmSync, statSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../", import.meta.url))

/** The compiled server and CLI, by path. */
export const compiled = { main: join(root, "dist", "main.mjs"), cli: join(root, "dist", "cli.mjs") }

const lockDir = join(root, "dist.build-lock")

/** A build takes a few minutes at most on a busy machine: a lock older than this was left by a run that died. */
const StaleLockMs = 10 * 60_000

const takeLock = async () => {
  for (;;) {
    try {
      mkdirSync(lockDir)
      return
    } catch {
      if (Date.now() - (statSync(lockDir, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > StaleLockMs) {
        rmSync(lockDir, { recursive: true, force: true })
      }
      await new Promise((wake) => setTimeout(wake, 200))
    }
  }
}

const build = () =>
  new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, "scripts", "build.mjs"), "--if-stale"], { cwd: root, stdio: "inherit" })
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`scripts/build.mjs exited ${code}`))))
  })

/** Builds dist/ when it does not match its sources. */
export const ensureCompiled = Effect.promise(async () => {
  await takeLock()
  try {
    await build()
  } finally {
    rmSync(lockDir, { recursive: true, force: true })
  }
})

/** The environment of a compiled run: the test's settings over `PATH` and `HOME` alone. */
export const compiledEnv = (env: Readonly<Record<string, string>>): Record<string, string> => ({
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? "",
  ...env
})

/** How a run ended. */
export interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `node <script> ...args` with `env` to its end (killed after `timeoutMs`, a guard against a hang). */
export const runCompiled = (script: string, args: ReadonlyArray<string>, env: Readonly<Record<string, string>>, timeoutMs = 60_000) =>
  Effect.callback<Ran>((resume) => {
    execFile(process.execPath, [script, ...args], { cwd: root, env: compiledEnv(env), timeout: timeoutMs }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : null
      resume(Effect.succeed({ code, stdout, stderr }))
    })
  })
