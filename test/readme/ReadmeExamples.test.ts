/**
 * The README is a user's guide whose commands must keep working: it stays within 500 lines, and every `curl` command
 * of its quick start and API tour runs as written (only the address changes to the test server's, and `$KEY` is a
 * seeded owner key) against a live server, answering 2xx with the body its text promises.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { ServerAddress } from "../../src/server/Listen.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerLive } from "../support/TestServer.js"

const readme = readFileSync(fileURLToPath(new URL("../../README.md", import.meta.url)), "utf8")

/** The text of a `## ` section of the README, up to the next one. */
const section = (title: string): string => {
  const start = readme.indexOf(`\n## ${title}\n`)
  if (start < 0) throw new Error(`README has no "## ${title}" section`)
  const end = readme.indexOf("\n## ", start + 1)
  return readme.slice(start, end < 0 ? undefined : end)
}

/** Each `curl` command of a section's `sh` blocks, its continuation lines joined. */
const curlCommands = (text: string): ReadonlyArray<string> => {
  const commands: Array<string> = []
  for (const block of text.matchAll(/```sh\n([\s\S]*?)```/g)) {
    let current: string | undefined
    for (const line of block[1]!.split("\n")) {
      if (current === undefined && !line.startsWith("curl ")) continue
      current = current === undefined ? line : `${current}\n${line}`
      const quotesOpen = current.split("'").length % 2 === 0
      if (line.endsWith("\\") || quotesOpen) continue
      commands.push(current)
      current = undefined
    }
  }
  return commands
}

interface Outcome {
  readonly command: string
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs one command in bash with `curl` failing on a 4xx or 5xx answer, against the test server. */
const run = (command: string, baseUrl: string, key: string) =>
  Effect.callback<Outcome>((resume) => {
    const script = `curl() { command curl --fail-with-body "$@"; }\n${command.replaceAll("http://127.0.0.1:8080", baseUrl)}`
    execFile("bash", ["-c", script], { env: { ...process.env, KEY: key }, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resume(Effect.succeed({ command, code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr })))
  })

describe("README.md", () => {
  it("is a user's guide of at most 500 lines", () => {
    assert.isAtMost(readme.split("\n").length, 500)
  })

  layer(TestServerLive(), { excludeTestServices: true, timeout: "120 seconds" })("its commands", (it) => {
    it.effect("every curl command of the quick start and the API tour answers 2xx as described", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        const address = yield* ServerAddress
        const commands = [...curlCommands(section("Quick start")), ...curlCommands(section("API tour"))]
        assert.isAtLeast(commands.length, 10)
        const outcomes = yield* Effect.forEach(commands, (command) => run(command, address.url, secret))
        for (const outcome of outcomes) {
          assert.strictEqual(outcome.code, 0, `${outcome.command}\n${outcome.stdout}\n${outcome.stderr}`)
        }
        const answer = (fragment: string) => {
          const outcome = outcomes.find((each) => each.command.includes(fragment))
          if (outcome === undefined) throw new Error(`README has no command with ${fragment}`)
          return outcome.stdout
        }
        const parsed = (fragment: string) => JSON.parse(answer(fragment))
        assert.deepStrictEqual(parsed("/healthz"), { status: "ok" })
        const run0 = parsed("Idempotency-Key: first-run")
        assert.strictEqual(run0.kind, "decision")
        assert.hasAllKeys(run0.decision.answers, ["refund", "topic", "urgency"])
        assert.strictEqual(parsed("/v1/runs?limit=5").runs[0].run_id, run0.run_id)
        const selection = parsed("/v1/router/select")
        assert.include(
          ["openai/gpt-5.4-mini", "google/gemini-3-flash-preview", "anthropic/claude-haiku-4.5"],
          selection.model.id
        )
        assert.strictEqual(selection.classification.domain.label, "coding")
        const key = parsed("support-bot")
        assert.strictEqual(key.limits.runs_per_minute, 60)
        assert.match(key.secret, /^otsk_[0-9a-f]{64}$/)
        assert.isArray(parsed("group_by=model").groups)
        assert.match(answer("format=csv"), /^run_id,retry_ordinal,provider,model_id,[a-z_,]+\r\n/)
        assert.match(parsed("/v1/billing/checkout").checkout_url, /^http/)
      }))
  })
})
