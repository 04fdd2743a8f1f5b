/**
 * `POST /v1/router/select` with the built-in model (the default install: no decision provider configured, so the
 * embedded classifier answers), one request at a time, on PostgreSQL and on the embedded database, for a short
 * prompt and a 4 KB prompt (a coding request with a pasted log). Each selection's `Server-Timing` is read per
 * request: `admit` (admission: the ledger's round trips that open the run), `settle` (settlement: the ledger's
 * round trips that close it), `upstream` (the classification: the built-in model's reads) and the rest of `total`
 * (checks, ranking, storing the selection, rendering). The router's own cost is `total - admit - settle`, per
 * request; the table shows the p50 of each part and of that cost, and the client's round trip.
 * Run: `node --import tsx bench/router-default.ts` (also part of `npm run bench:router`).
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { createBenchDatabase } from "./support/BenchDatabase.js"
import { startNode } from "./support/Processes.js"

const SELECTIONS = Number(process.env.BENCH_SELECTIONS ?? 200)
const WARM_UP = 150

const SHORT = "Write a Python function that merges overlapping intervals, with unit tests."

const LOG_LINE = "2024-06-11 09:14:02.311 ERROR 1 --- [nio-8080-exec-3] c.e.shop.web.CartController : checkout failed for cart "

/** A 4,096-character prompt: a request around a pasted log, as users paste them. */
export const FOUR_KB = (() => {
  const head = "Our checkout started failing after the last deploy. Here is the log from the pod:\n\n"
  const tail = "\n\nWhy does this fail, and what should I change in CartService?"
  let log = ""
  for (let n = 0; log.length < 4096 - head.length - tail.length; n++) log += `${LOG_LINE}${1000 + n}\n`
  return `${head}${log.slice(0, 4096 - head.length - tail.length)}${tail}`
})()

interface Timed {
  readonly clientMs: number
  readonly parts: Record<string, number>
}

const post = (url: URL, secret: string, body: string) =>
  new Promise<Timed>((resolve, reject) => {
    const started = performance.now()
    const req = request(url, {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) }
    }, (res) => {
      res.resume()
      res.on("end", () => {
        if (res.statusCode !== 200) return reject(new Error(`select answered ${res.statusCode}`))
        const parts: Record<string, number> = {}
        for (const part of String(res.headers["server-timing"] ?? "").split(",")) {
          const match = /^\s*([a-z]+);dur=([0-9.]+)/.exec(part)
          if (match !== null) parts[match[1]!] = Number(match[2])
        }
        resolve({ clientMs: performance.now() - started, parts })
      })
    })
    req.on("error", reject)
    req.end(body)
  })

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? NaN
}

/** The prompt of the n-th request: its first characters replaced by the request's number, so no cache helps. */
const numbered = (prompt: string, n: number): string => `(${n}) ${prompt}`.slice(0, Math.max(prompt.length, 80))

/** One prompt's selections, one at a time: the p50 of every part and of the router's own cost. */
const measure = async (baseUrl: string, secret: string, prompt: string) => {
  const url = new URL("/v1/router/select", baseUrl)
  const body = (n: number) => JSON.stringify({ prompt: numbered(prompt, n), policy: "balanced" })
  for (let i = 0; i < WARM_UP; i++) await post(url, secret, body(i))
  const timed: Array<Timed> = []
  for (let i = 0; i < SELECTIONS; i++) timed.push(await post(url, secret, body(WARM_UP + i)))
  const part = (name: string) => median(timed.map((t) => t.parts[name] ?? 0))
  const own = median(timed.map((t) => (t.parts.total ?? 0) - (t.parts.admit ?? 0) - (t.parts.settle ?? 0)))
  const rest = median(timed.map((t) => (t.parts.gateway ?? 0) - (t.parts.settle ?? 0)))
  return { client: median(timed.map((t) => t.clientMs)), total: part("total"), admit: part("admit"), settle: part("settle"), upstream: part("upstream"), rest, own }
}

const createOrganization = (env: Record<string, string>): string => {
  const output = execFileSync(process.execPath, [
    "--import", "tsx", "src/cli.ts", "org", "create", "--name", "bench", "--owner-email", "bench@example.com"
  ], { env: { ...process.env, ...env, LOG_LEVEL: "warn" }, encoding: "utf8" })
  return JSON.parse(output).key.secret
}

const fixed = (value: number) => value.toFixed(2).padStart(8)

const printRow = (database: string, prompt: string, m: Awaited<ReturnType<typeof measure>>) =>
  console.log(`${database.padEnd(11)} ${prompt.padEnd(7)}${fixed(m.client)}${fixed(m.total)}${fixed(m.admit)}${fixed(m.settle)}${fixed(m.upstream)}${fixed(m.rest)}${fixed(m.own)}`)

/** Starts the service with the built-in model on a database, measures both prompts, stops it. */
const onDatabase = async (database: string, env: Record<string, string>) => {
  const secret = createOrganization(env)
  const service = await startNode("src/main.ts", { ...env, BILLING_PROVIDER: "local", WORKERS: "1", LOG_LEVEL: "warn" }, "/readyz")
  try {
    printRow(database, "short", await measure(service.url, secret, SHORT))
    printRow(database, "4 KB", await measure(service.url, secret, FOUR_KB))
  } finally {
    await service.stop()
  }
}

/** Prints the table for PostgreSQL and for the embedded database. */
export const printDefaultSelectTimes = async () => {
  console.log(`\nPOST /v1/router/select with the built-in model, one at a time, ${SELECTIONS} selections per row after ${WARM_UP} (p50, ms)`)
  console.log("  own = total - admit - settle per request: the router's cost on top of the ledger's round trips")
  console.log("  classify = the built-in model's reads (Server-Timing upstream); rest = checks, ranking, storing the selection, rendering")
  console.log(`${"database".padEnd(11)} ${"prompt".padEnd(7)}${"client".padStart(8)}${"total".padStart(8)}${"admit".padStart(8)}${"settle".padStart(8)}${"classify".padStart(8)}${"rest".padStart(8)}${"own".padStart(8)}`)
  const database = await createBenchDatabase()
  try {
    await onDatabase("PostgreSQL", { DATABASE_URL: database.url })
  } finally {
    await database.drop()
  }
  const dataDir = mkdtempSync(join(tmpdir(), "arbiter-bench-"))
  try {
    await onDatabase("embedded", { DATA_DIR: dataDir })
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  printDefaultSelectTimes().catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
}
