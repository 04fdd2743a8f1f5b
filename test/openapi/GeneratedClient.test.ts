/**
 * A client generated from the committed document with a widely used generator, as a client author would make one:
 * `openapi-typescript` turns `schema/openapi.json` into types (the committed test/openapi/generated/ must be exactly
 * its output: `npm run openapi` rewrites both), a small `openapi-fetch` program is type-checked against them (its
 * `@ts-expect-error` lines fail the check unless the document requires `Idempotency-Key` on `POST /v1/runs` and
 * fixes every error's `code`), and the same program runs against a live server, whose records are then read back.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { ServerAddress } from "../../src/server/Listen.js"
import { call } from "../support/Api.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerLive } from "../support/TestServer.js"
import { runProgram } from "./fixtures/OpenApiFetchProgram.js"

const root = fileURLToPath(new URL("../../", import.meta.url))
const generatedPath = fileURLToPath(new URL("./generated/arbiter-openapi.d.ts", import.meta.url))
const programPath = fileURLToPath(new URL("./fixtures/OpenApiFetchProgram.ts", import.meta.url))

/** What `openapi-typescript schema/openapi.json` prints. */
const generate = Effect.callback<string, Error>((resume) => {
  execFile(
    process.execPath,
    ["node_modules/openapi-typescript/bin/cli.js", "schema/openapi.json"],
    { cwd: root, maxBuffer: 64 * 1024 * 1024 },
    (error, stdout) => resume(error === null ? Effect.succeed(stdout) : Effect.fail(error))
  )
})

/** The type errors of a file under the project's compiler options, formatted. */
const typeErrors = (file: string): string => {
  const config = ts.getParsedCommandLineOfConfigFile(`${root}tsconfig.json`, {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"))
    }
  })
  if (config === undefined) throw new Error("tsconfig.json could not be read")
  const program = ts.createProgram([file], { ...config.options, noEmit: true })
  return ts.formatDiagnostics(ts.getPreEmitDiagnostics(program), {
    getCanonicalFileName: (name) => name,
    getCurrentDirectory: () => root,
    getNewLine: () => "\n"
  })
}

describe("openapi-typescript", () => {
  layer(TestServerLive(), { excludeTestServices: true, timeout: "120 seconds" })("a generated client", (it) => {
    it.effect("is generated from schema/openapi.json exactly as committed", () =>
      Effect.gen(function*() {
        const generated = yield* generate
        assert.include(generated, "\"idempotency-key\": string;")
        assert.strictEqual(generated, readFileSync(generatedPath, "utf8"), "stale: run npm run openapi")
      }))

    it.effect("type-checks a program using it with openapi-fetch", () =>
      Effect.sync(() => assert.strictEqual(typeErrors(programPath), "", "the program does not type-check")))

    it.effect("runs that program against a live server: a key, a decision run and a selection", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const address = yield* ServerAddress
        const result = yield* Effect.promise(() => runProgram(address.url, organization.secret))
        assert.deepStrictEqual(result.keyScopes, ["runs_read", "runs_write"])
        assert.strictEqual(result.runState, "completed")
        assert.strictEqual((result.topic as { choice: string }).choice, "shipping")
        assert.isTrue(result.replayed)
        assert.match(result.replayRequestId ?? "", /^req_[0-9a-f]{32}$/)
        assert.strictEqual(result.missingKeyCode, "idempotency_key_required")
        assert.strictEqual(result.conflictCode, "idempotency_conflict")

        const secret = organization.secret
        const key = (yield* call("GET", `/v1/keys/${result.keyId}`, { secret })).json()
        assert.deepStrictEqual([key.name, key.state, key.scopes], ["openapi-fetch", "active", ["runs_read", "runs_write"]])
        const run = (yield* call("GET", `/v1/runs/${result.runId}`, { secret })).json()
        assert.strictEqual(run.state, "completed")
        const selection = (yield* call("GET", `/v1/runs/${result.selectionRunId}`, { secret })).json()
        assert.strictEqual(selection.state, "completed")
        const usage = (yield* call("GET", "/v1/usage", { secret })).json()
        assert.strictEqual(usage.runs.total, 2, "the run and the selection; the replay, conflict and refusal stored none")
        const catalog = (yield* call("GET", "/v1/router/models", { secret })).json()
        assert.include(catalog.models.map((model: { id: string }) => model.id), result.selectedModel)
      }))
  })
})
