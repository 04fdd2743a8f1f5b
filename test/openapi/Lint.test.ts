/**
 * The committed OpenAPI document (`schema/openapi.json`, equal to the served one) passes `@redocly/cli lint` under
 * the repository's redocly.yaml (Redocly's recommended rules) with no error and no warning; what it is told to ignore
 * is listed with its reason in .redocly.lint-ignore.yaml. It names where the API is served (`servers`: first the
 * serving service itself, by a relative URL) and declares no schema `$id`, which a field used in many places would
 * declare once per place.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { committedDocument as document } from "./OpenApiValidator.js"

const root = fileURLToPath(new URL("../../", import.meta.url))
const cli = fileURLToPath(new URL("../../node_modules/@redocly/cli/bin/cli.js", import.meta.url))

interface LintReport {
  readonly totals: { readonly errors: number; readonly warnings: number; readonly ignored: number }
  readonly problems: ReadonlyArray<{
    readonly ruleId: string
    readonly severity: string
    readonly message: string
    readonly location: ReadonlyArray<{ readonly pointer?: string }>
  }>
}

/** `redocly lint --format=json` of the committed document, run from the root so redocly.yaml applies. */
const lint = () =>
  new Promise<LintReport>((resolve, reject) => {
    execFile(
      process.execPath,
      [cli, "lint", "--format=json", "schema/openapi.json"],
      {
        cwd: root,
        // No telemetry and no update check: the lint reads the document and nothing else.
        env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
        maxBuffer: 64 * 1024 * 1024,
        timeout: 120_000
      },
      (error, stdout, stderr) => {
        try {
          resolve(JSON.parse(stdout) as LintReport)
        } catch {
          reject(new Error(`redocly lint printed no report (${error?.message ?? "exit 0"}):\n${stderr}`))
        }
      }
    )
  })

/** Every `$id` keyword in a value, by its JSON pointer. */
const idsIn = (value: unknown, at = ""): ReadonlyArray<string> =>
  Array.isArray(value)
    ? value.flatMap((item, index) => idsIn(item, `${at}/${index}`))
    : typeof value === "object" && value !== null
    ? Object.entries(value).flatMap(([key, item]) => [
      ...(key === "$id" ? [at] : []),
      ...idsIn(item, `${at}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`)
    ])
    : []

describe("schema/openapi.json under @redocly/cli lint", () => {
  it("has no error and no warning under the recommended rules", async () => {
    const report = await lint()
    const problems = report.problems.map((problem) =>
      `${problem.severity} ${problem.ruleId} at ${problem.location[0]?.pointer ?? "?"}: ${problem.message}`
    )
    assert.deepStrictEqual(problems, [])
    assert.deepStrictEqual([report.totals.errors, report.totals.warnings], [0, 0])
    assert.strictEqual(report.totals.ignored, 2, "only the probes' missing 4xx, as .redocly.lint-ignore.yaml says")
  })

  it("names its servers: the serving service first, by a relative URL, then a local npm start", () => {
    assert.deepStrictEqual(document.servers.map((server: { url: string }) => server.url), ["/", "http://127.0.0.1:8080"])
    for (const server of document.servers) assert.isString(server.description)
  })

  it("declares no schema $id", () => {
    assert.deepStrictEqual(idsIn(document), [])
  })
})
