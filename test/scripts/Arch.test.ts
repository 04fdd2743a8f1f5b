/**
 * `npm run arch` (scripts/arch.mjs): it prints the import graph between folders and fails on a cycle, between
 * folders or between modules. Run on small trees written here (a two-way pair, a longer cycle, a module loop inside
 * one folder, one-way imports, imports a comment or a string only mentions) and on the repository itself, which must
 * pass.
 */
import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const repository = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const script = join(repository, "scripts", "arch.mjs")

/** Runs the script on a tree of the given files (path relative to the tree -> source). */
const archOf = (files: Readonly<Record<string, string>>) => {
  const root = mkdtempSync(join(tmpdir(), "arbiter-arch-"))
  try {
    for (const [path, source] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true })
      writeFileSync(join(root, path), source)
    }
    return run(root)
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

const run = (root?: string) => {
  const result = spawnSync(process.execPath, root === undefined ? [script] : [script, root], { encoding: "utf8" })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

describe("npm run arch", () => {
  it("fails on a two-way pair and names the imports on both sides", () => {
    const result = archOf({
      "src/runs/Engine.ts": `import type { Read } from "../providers/Port.js"\nexport const engine = (read: Read) => read\n`,
      "src/providers/Port.ts": `import { plan } from "../runs/Plan.js"\nexport type Read = typeof plan\n`,
      "src/runs/Plan.ts": `export const plan = 1\n`
    })
    assert.strictEqual(result.status, 1)
    assert.include(result.stdout, "two-way pair src/providers <-> src/runs")
    assert.include(result.stdout, "src/providers/Port.ts -> src/runs/Plan.ts")
    assert.include(result.stdout, "src/runs/Engine.ts -> src/providers/Port.ts")
    assert.include(result.stderr, "1 cycle(s) between folders")
  })

  it("fails on a longer cycle and shows the path around it", () => {
    const result = archOf({
      "src/a/A.ts": `export * from "../b/B.js"\n`,
      "src/b/B.ts": `export const b = () => import("../c/C.js")\n`,
      "src/c/C.ts": `import "../a/A.js"\n`
    })
    assert.strictEqual(result.status, 1)
    assert.include(result.stdout, "cycle src/a -> src/b -> src/c -> src/a")
  })

  it("fails on modules of one folder that import each other, a type import included", () => {
    const result = archOf({
      "schema/RunsApi.ts": `import { Example } from "./RunsExamples.js"\nexport const Run = { example: Example }\n`,
      "schema/RunsExamples.ts": `import type { Run } from "./RunsApi.js"\nexport const Example: typeof Run | null = null\n`,
      "schema/Ids.ts": `export const id = 1\n`
    })
    assert.strictEqual(result.status, 1)
    assert.include(result.stdout, "Module cycle schema/RunsApi.ts -> schema/RunsExamples.ts -> schema/RunsApi.ts")
    assert.include(result.stderr, "1 cycle(s) between modules")
    assert.notInclude(result.stderr, "between folders")
  })

  it("passes one-way imports, and prints each folder with what it imports", () => {
    const result = archOf({
      "schema/Api.ts": `export const api = 1\n`,
      "src/main.ts": `import { runs } from "./runs/Runs.js"\nimport { api } from "../schema/Api.js"\nexport const main = [runs, api]\n`,
      "src/runs/Runs.ts": `import { api } from "../../schema/Api.js"\nimport { config } from "../config/Config.js"\nexport const runs = [api, config]\n`,
      "src/config/Config.ts": `import { Effect } from "effect"\nexport const config = Effect.void\n`
    })
    assert.strictEqual(result.status, 0, result.stdout + result.stderr)
    assert.include(result.stdout, "schema/ and src/")
    assert.match(result.stdout, /src\s+-> schema \(1\), src\/runs \(1\)/)
    assert.match(result.stdout, /src\/runs\s+-> schema \(1\), src\/config \(1\)/)
    assert.match(result.stdout, /src\/config\s+-> nothing/)
    assert.include(result.stdout, "One-way")
  })

  it("reads imports, not comments or strings that look like them", () => {
    const result = archOf({
      "src/a/A.ts": `import { b } from "../b/B.js"\nexport const a = b\n`,
      "src/b/B.ts": `// import { a } from "../a/A.js"\nexport const b = 'import { a } from "../a/A.js"'\n`
    })
    assert.strictEqual(result.status, 0, result.stdout + result.stderr)
  })

  it("passes on this repository", () => {
    const result = run()
    assert.strictEqual(result.status, 0, result.stdout + result.stderr)
  })
})
