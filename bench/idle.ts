/**
 * `npm run bench:idle`: what a started service costs while nothing is asked of it. For each build in
 * `BENCH_SERVICE_SCRIPTS` (comma-separated, default the bundle `npm start` runs; an entry `<node binary> <script>` runs
 * that script on that Node), alternated over `BENCH_ROUNDS` rounds (default 3), it starts the service alone
 * (`WORKERS=1`) on the embedded database in a fresh `DATA_DIR`, waits for `/readyz`, lets it settle for
 * `BENCH_SETTLE_SECONDS` (default 5), then over `BENCH_SECONDS` (default 20) reads its resident memory (VmRSS, every
 * second, the last reading printed) and the CPU it used, per second. With `BENCH_DATABASE=postgres` it runs on a fresh
 * PostgreSQL database instead (bench/support/BenchDatabase.ts).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ServerNodeFlags } from "../src/server/Workers.js"
import { createBenchDatabase } from "./support/BenchDatabase.js"
import { cpuMillisOfTree, processTree, startNode } from "./support/Processes.js"

const builds = (process.env.BENCH_SERVICE_SCRIPTS ?? "dist/main.mjs").split(",").filter((build) => build !== "")
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const settleSeconds = Number(process.env.BENCH_SETTLE_SECONDS ?? 5)
const seconds = Number(process.env.BENCH_SECONDS ?? 20)
const onPostgres = process.env.BENCH_DATABASE === "postgres"

const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms))

/** Resident memory (MiB) of a process and its descendants, from /proc. */
const rssMiB = (pid: number): number =>
  processTree(pid).reduce((sum, each) => {
    try {
      const line = readFileSync(`/proc/${each}/status`, "utf8").split("\n").find((row) => row.startsWith("VmRSS:"))
      return sum + Number(line?.split(/\s+/)[1] ?? 0) / 1024
    } catch {
      return sum
    }
  }, 0)

const oneBuild = async (build: string) => {
  const [nodeBinary, script] = build.includes(" ") ? build.split(" ", 2) as [string, string] : [process.execPath, build]
  const dataDir = mkdtempSync(join(tmpdir(), "arbiter-idle-"))
  const database = onPostgres ? await createBenchDatabase() : undefined
  const env = { DATA_DIR: dataDir, WORKERS: "1", LOG_LEVEL: "error", ...(database ? { DATABASE_URL: database.url } : {}) }
  const service = await startNode(script, env, "/readyz", ServerNodeFlags, nodeBinary)
  try {
    await sleep(settleSeconds * 1_000)
    const pid = service.process.pid!
    const cpuBefore = cpuMillisOfTree(pid)
    let rss = 0
    for (let second = 0; second < seconds; second++) {
      await sleep(1_000)
      rss = rssMiB(pid)
    }
    const cpuPerSecond = (cpuMillisOfTree(pid) - cpuBefore) / seconds
    return { rss, cpuPerSecond }
  } finally {
    await service.stop()
    await database?.drop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const main = async () => {
  console.log(`idle: ${rounds} round(s) of ${builds.join(", ")} on ${onPostgres ? "PostgreSQL" : "the embedded database"}; ` +
    `settle ${settleSeconds} s, measure ${seconds} s`)
  const results = new Map<string, Array<{ rss: number; cpuPerSecond: number }>>()
  for (let round = 0; round < rounds; round++) {
    for (const build of builds) {
      const result = await oneBuild(build)
      results.set(build, [...(results.get(build) ?? []), result])
      console.log(`${build}: RSS ${result.rss.toFixed(1)} MiB, CPU ${result.cpuPerSecond.toFixed(2)} ms per second`)
    }
  }
  console.log("means:")
  for (const [build, each] of results) {
    const mean = (read: (result: { rss: number; cpuPerSecond: number }) => number) =>
      each.reduce((sum, result) => sum + read(result), 0) / each.length
    console.log(`  ${build}: RSS ${mean((r) => r.rss).toFixed(1)} MiB, CPU ${mean((r) => r.cpuPerSecond).toFixed(2)} ms per second`)
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
