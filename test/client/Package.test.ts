/**
 * `@arbiter/client` as a user gets it, outside the repository: `npm pack` in packages/client (which builds it first,
 * its `prepare` script) makes a tarball holding only the compiled client and the contract modules it imports; the
 * tarball is installed with `effect` into an empty folder in the system's temporary directory (where nothing of the
 * repository resolves); there the README's example (packages/client/examples/quickstart.ts, which README.md and the
 * package's README.md show verbatim) type-checks against the package's own declarations, and Node runs it, as it
 * is, against a live server, whose records then show what it did. Installed by path (`--install-links`), it is a
 * built copy as well, not a link into the repository.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { execFile } from "node:child_process"
import { copyFileSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { ServerAddress } from "../../src/server/Listen.js"
import { call } from "../support/Api.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerLive } from "../support/TestServer.js"

const root = fileURLToPath(new URL("../../", import.meta.url))
const packageFolder = join(root, "packages", "client")
const examplePath = join(packageFolder, "examples", "quickstart.ts")
const manifest = JSON.parse(readFileSync(join(packageFolder, "package.json"), "utf8"))
/** The Effect the service runs on, which the example's folder installs beside the client. */
const effectVersion: string = JSON.parse(readFileSync(join(root, "node_modules", "effect", "package.json"), "utf8"))
  .version

/** Runs a program; resolves with its output, fails with its output when it exits non-zero. */
const exec = (file: string, args: ReadonlyArray<string>, cwd: string, env: Record<string, string> = {}) =>
  Effect.callback<{ readonly stdout: string; readonly stderr: string }, Error>((resume) => {
    execFile(
      file,
      args,
      { cwd, env: { ...process.env, ...env }, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resume(
          error === null
            ? Effect.succeed({ stdout, stderr })
            : Effect.fail(new Error(`${file} ${args.join(" ")}: ${error.message}\n${stdout}\n${stderr}`))
        )
    )
  })

/** npm, quiet about audits and funding, taking what the cache holds before asking the registry. */
const npm = (args: ReadonlyArray<string>, cwd: string) =>
  exec("npm", [...args, "--prefer-offline", "--no-audit", "--no-fund", "--omit-lockfile-registry-resolved=false"], cwd)

/** A ```ts block of a Markdown file, in order. */
const tsBlocks = (path: string): ReadonlyArray<string> =>
  [...readFileSync(path, "utf8").matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1]!)

/** A program the example's folder type-checks beside it: each line marked as an error must be one. */
const TypesAreReal = `import { Effect } from "effect"
import { ArbiterClient, type Run } from "@arbiter/client"

export const wrong = Effect.gen(function*() {
  const client = yield* ArbiterClient
  // @ts-expect-error a run is created with its Idempotency-Key header
  yield* client.runs.create({ headers: {}, payload: { kind: "decision", questions: {} } })
  // @ts-expect-error the API has no such group
  yield* client.invoices.list()
  const run: typeof Run.Type = yield* client.runs.get({ params: { run_id: "run_0" } })
  // @ts-expect-error a run's state is one of the contract's
  const state: "sleeping" = run.state
  return state
})
`

/** The folder's TypeScript settings: strict, as a user's, with the declarations of its packages checked too. */
const TsConfig = {
  compilerOptions: {
    target: "ES2022",
    lib: ["ES2022", "DOM"],
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    exactOptionalPropertyTypes: true,
    types: [],
    noEmit: true,
    skipLibCheck: false
  },
  files: ["quickstart.ts", "types-are-real.ts"]
}

/** Packs the package into `folder`, installs it into an empty app there, type-checks and runs the example. */
const packAndRun = (folder: string) =>
  Effect.gen(function*() {
    const packed = JSON.parse((yield* npm(["pack", "--json", "--pack-destination", folder], packageFolder)).stdout)
    const files: Array<string> = packed[0].files.map((file: { path: string }) => file.path)
    assert.includeMembers(files, ["package.json", "README.md", "dist/packages/client/src/index.js"])
    assert.includeMembers(files, ["dist/packages/client/src/index.d.ts", "dist/schema/Api.js", "dist/schema/Api.d.ts"])
    const shipped = new RegExp(
      String.raw`^(package\.json|README\.md|dist/packages/client/src/index\.(js|d\.ts)|dist/schema/\w+\.(js|d\.ts))$`
    )
    const outside = files.filter((path) => !shipped.test(path))
    assert.deepStrictEqual(outside, [], "the tarball holds the client and the contract's modules, nothing else")

    const app = join(folder, "app")
    mkdirSync(app)
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }))
    yield* npm(["install", `effect@${effectVersion}`, join(folder, packed[0].filename)], app)
    const installed = JSON.parse(readFileSync(join(app, "node_modules", "@arbiter", "client", "package.json"), "utf8"))
    assert.strictEqual(installed.version, manifest.version)

    copyFileSync(examplePath, join(app, "quickstart.ts"))
    writeFileSync(join(app, "types-are-real.ts"), TypesAreReal)
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify(TsConfig))
    yield* exec(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], app)

    const { secret } = yield* seedOrganization()
    const address = yield* ServerAddress
    const output = yield* exec(process.execPath, ["quickstart.ts"], app, {
      ARBITER_BASE_URL: address.url,
      ARBITER_API_KEY: secret
    })
    const steps = output.stdout.trim().split("\n").map((line) => JSON.parse(line))
    assert.deepStrictEqual(steps.map((step) => step.step), ["key", "run", "conflict", "selection"])
    const [key, decided, conflict, selection] = steps
    assert.deepStrictEqual(key.scopes, ["runs_read", "runs_write"])
    assert.strictEqual(decided.state, "completed")
    assert.strictEqual(decided.answers.topic.choice, "billing")
    assert.deepStrictEqual(conflict.code, "idempotency_conflict")
    assert.match(conflict.request_id, /^req_[0-9a-f]{32}$/)

    // `last_used_at` is written by a background flush (src/auth/LastUsed.ts): read until it lands.
    const readKey = Effect.map(call("GET", `/v1/keys/${key.id}`, { secret }), (response) => response.json())
    const storedKey = yield* readKey.pipe(
      Effect.filterOrFail((found) => found.last_used_at !== null, () => "last_used_at not written yet"),
      Effect.retry(Schedule.max([Schedule.spaced("200 millis"), Schedule.recurs(50)])),
      Effect.orDie
    )
    assert.deepStrictEqual([storedKey.name, storedKey.state], ["support-triage", "active"])
    const storedRun = (yield* call("GET", `/v1/runs/${decided.run_id}`, { secret })).json()
    assert.deepStrictEqual(storedRun.decision.answers, decided.answers)
    const classification = (yield* call("GET", `/v1/runs/${selection.run_id}`, { secret })).json()
    assert.strictEqual(classification.state, "completed")
    const models = (yield* call("GET", "/v1/router/models", { secret })).json().models
    assert.include(models.map((model: { id: string }) => model.id), selection.model)
    const usage = (yield* call("GET", "/v1/usage", { secret })).json()
    assert.strictEqual(usage.runs.total, 2, "the decision and the selection; the refused reuse stored nothing")
  })

/** Installs the package by path into an empty app in `folder`; what the app imports from it. */
const installByPath = (folder: string) =>
  Effect.gen(function*() {
    writeFileSync(join(folder, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }))
    yield* npm(["install", `effect@${effectVersion}`, "--install-links", packageFolder], folder)
    assert.isFalse(lstatSync(join(folder, "node_modules", "@arbiter", "client")).isSymbolicLink(), "a copy, not a link")
    const imported = yield* exec(process.execPath, [
      "--input-type=module",
      "-e",
      "const client = await import('@arbiter/client'); console.log(Object.keys(client).sort().join(' '))"
    ], folder)
    return imported.stdout.trim()
  })

describe("@arbiter/client's manifest and README", () => {
  it("depends on effect alone, and both READMEs show the example verbatim", () => {
    assert.strictEqual(manifest.name, "@arbiter/client")
    assert.deepStrictEqual(Object.keys(manifest.peerDependencies ?? {}), ["effect"])
    assert.deepStrictEqual([manifest.dependencies, manifest.optionalDependencies], [undefined, undefined])
    const example = readFileSync(examplePath, "utf8")
    assert.include(tsBlocks(join(root, "README.md")), example, "README.md shows packages/client/examples/quickstart.ts")
    assert.include(tsBlocks(join(packageFolder, "README.md")), example, "packages/client/README.md shows it too")
  })
})

layer(TestServerLive(), { excludeTestServices: true, timeout: "600 seconds" })("@arbiter/client, packed", (it) => {
  it.effect("installs from its tarball into an empty folder and runs the README's example against the server", () =>
    Effect.suspend(() => {
      const folder = mkdtempSync(join(tmpdir(), "arbiter-client-"))
      return Effect.ensuring(packAndRun(folder), Effect.sync(() => rmSync(folder, { recursive: true, force: true })))
    }), { timeout: 600_000 }) // packing, installing and type-checking take a minute or more on a busy machine
})

describe("@arbiter/client, by path", () => {
  it.effect("installs from its folder with --install-links (packed and built as the tarball is)", () =>
    Effect.suspend(() => {
      const folder = mkdtempSync(join(tmpdir(), "arbiter-client-path-"))
      return Effect.ensuring(
        Effect.map(installByPath(folder), (exported) =>
          assert.strictEqual(exported, "Api ArbiterClient ArbiterClientConfig Errors makeArbiterClient")),
        Effect.sync(() => rmSync(folder, { recursive: true, force: true }))
      )
    }), { timeout: 600_000 })
})
