/**
 * `npm run bench:compare`: builds side by side, closed loop. For each round and each build in `BENCH_SERVICE_SCRIPTS`
 * (comma-separated, default the bundle `npm start` runs; build another into its own file to compare; an entry
 * `<node binary> <script>` runs that script on that Node, to compare runtimes), it starts the
 * service as `bench:runs` does (PostgreSQL, the benchmarks' upstream answering in `BENCH_UPSTREAM_MS`, default 0) with
 * `WORKERS` 1 on a fresh database with `BENCH_ORGANIZATIONS` organizations (default 10), and for each concurrency in
 * `BENCH_IN_FLIGHT` (default 1,16,64) sends one-question runs for `BENCH_SECONDS` (default 6) after a 2 s warm-up. It
 * prints runs/s, the p50 latency, and the service's and PostgreSQL's CPU per run, then each build's means over
 * `BENCH_ROUNDS` rounds (default 3): on a shared or virtual machine only builds alternated in one run compare.
 */
import { ServerNodeFlags } from "../src/server/Workers.js"
import { createBenchDatabase } from "./support/BenchDatabase.js"
import { seedOrganizations } from "./support/BenchSeed.js"
import { type LoadResult, runLoad } from "./support/Load.js"
import { runRequests } from "./support/RunRequests.js"
import { benchServiceEnv, cpuMillisOfCommand, cpuMillisOfTree, startNode } from "./support/Processes.js"

const scripts = (process.env.BENCH_SERVICE_SCRIPTS ?? "dist/main.mjs").split(",").filter((script) => script !== "")
const inFlight = (process.env.BENCH_IN_FLIGHT ?? "1,16,64").split(",").map(Number)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const seconds = Number(process.env.BENCH_SECONDS ?? 6)
const organizationCount = Number(process.env.BENCH_ORGANIZATIONS ?? 10)
const upstreamMs = process.env.BENCH_UPSTREAM_MS ?? "0"

const results = new Map<string, Array<LoadResult>>()

const line = (perSecond: number, p50: number, service: number, postgres: number) =>
  `${perSecond.toFixed(0)} runs/s, p50 ${p50.toFixed(2)} ms, CPU per run: service ${service.toFixed(3)} ms, ` +
  `PostgreSQL ${postgres.toFixed(3)} ms`

const oneBuild = async (build: string) => {
  const [nodeBinary, script] = build.includes(" ") ? build.split(" ", 2) as [string, string] : [process.execPath, build]
  const database = await createBenchDatabase()
  const upstream = await startNode("bench/upstream.ts", { LATENCY_MS: upstreamMs })
  const service = await startNode(script, { ...benchServiceEnv(database.url, upstream.url), WORKERS: "1" }, "/readyz",
    ServerNodeFlags, nodeBinary)
  try {
    const organizations = await seedOrganizations(database.url, organizationCount, 1_000_000_000_000, "compare")
    for (const connections of inFlight) {
      const result = await runLoad({
        baseUrl: service.url,
        connections,
        seconds,
        warmupSeconds: 2,
        request: runRequests(organizations, "compare"),
        cpu: { service: () => cpuMillisOfTree(service.process.pid!), postgres: () => cpuMillisOfCommand("postgres") }
      })
      const failed = Object.entries(result.statuses).filter(([status]) => status !== "200")
      const key = `${build}, ${connections} in flight`
      results.set(key, [...(results.get(key) ?? []), result])
      console.log(`${key}: ${line(result.perSecond, result.p50, result.cpuPerRequest["service"]!, result.cpuPerRequest["postgres"]!)}` +
        (failed.length === 0 ? "" : `; not 200: ${failed.map(([status, count]) => `${status}x${count}`).join(" ")}`))
    }
  } finally {
    await service.stop()
    await upstream.stop()
    await database.drop()
  }
}

const main = async () => {
  console.log(`compare: ${rounds} round(s) of ${scripts.join(", ")}; ${organizationCount} organizations, upstream ` +
    `${upstreamMs} ms, ${inFlight.join(", ")} in flight, ${seconds} s each`)
  for (let round = 0; round < rounds; round++) {
    for (const build of scripts) await oneBuild(build)
  }
  console.log("means:")
  for (const [key, each] of results) {
    const mean = (read: (result: LoadResult) => number) => each.reduce((sum, result) => sum + read(result), 0) / each.length
    console.log(`  ${key}: ${line(mean((r) => r.perSecond), mean((r) => r.p50), mean((r) => r.cpuPerRequest["service"]!),
      mean((r) => r.cpuPerRequest["postgres"]!))}`)
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
