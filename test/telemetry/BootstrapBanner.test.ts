/**
 * The first start's key banner (src/organizations/Bootstrap.ts) goes to stderr and `DATA_DIR/bootstrap.json` only,
 * never into a log line: the service started as `npm start` runs it with `LOG_FORMAT=json`, its stdout (the log
 * stream a shipper keeps) holds JSON lines only and never the secret.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { freePort } from "../../bench/support/Processes.js"
import { databaseMode, freshEmbeddedDataDir } from "../support/TestDatabase.js"

describe.skipIf(databaseMode() !== "embedded")("the bootstrap key banner", () => {
  it.live("is written to stderr and bootstrap.json, never to the log stream", () =>
    Effect.gen(function*() {
      const dataDir = yield* freshEmbeddedDataDir
      const port = yield* Effect.promise(freePort)
      const child = yield* Effect.acquireRelease(
        Effect.sync(() =>
          spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
            env: { ...process.env, DATA_DIR: dataDir, HOST: "127.0.0.1", PORT: String(port), LOG_FORMAT: "json", BILLING_PROVIDER: "local" },
            stdio: ["ignore", "pipe", "pipe"]
          })
        ),
        (child) =>
          Effect.callback<void>((resume) => {
            if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
            child.once("exit", () => resume(Effect.void))
            child.kill("SIGTERM")
          })
      )
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (chunk) => (stdout += chunk))
      child.stderr.on("data", (chunk) => (stderr += chunk))
      for (let i = 0; i < 600; i++) {
        const ready = yield* Effect.promise(() =>
          fetch(`http://127.0.0.1:${port}/readyz`).then((response) => response.status === 200, () => false)
        )
        if (ready && stderr.includes("otsk_")) break
        assert.isNull(child.exitCode, `${stdout}\n${stderr}`)
        yield* Effect.sleep("100 millis")
      }
      const { secret } = JSON.parse(readFileSync(join(dataDir, "bootstrap.json"), "utf8")) as { secret: string }
      assert.include(stderr, secret, "the banner shows the key on stderr")
      assert.notInclude(stdout, secret, "the log stream never holds the key")
      const lines = stdout.split("\n").filter((line) => line !== "")
      assert.isAbove(lines.length, 0)
      for (const line of lines) {
        const parsed = JSON.parse(line) as Record<string, unknown>
        assert.isString(parsed.msg, line)
        assert.isString(parsed.level, line)
      }
    }), { timeout: 120_000 })
})
