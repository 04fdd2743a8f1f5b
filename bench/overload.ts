/**
 * `npm run bench:overload`: the overload row of `bench:runs` alone, at a fixed offered rate, for builds side by side.
 * For each round and each build in `BENCH_SERVICE_SCRIPTS` (comma-separated, default the bundle `npm start` runs;
 * build another into its own file to compare), it starts the service as `bench:runs` does (two workers by default,
 * PostgreSQL, an upstream answering in 20 ms) on a fresh database with 100 organizations, warms it up with 64
 * connections for 4 s, then offers `BENCH_RATE` runs a second (default 2,000) for 3 s with `deadline_ms` 2,000 and
 * prints how many answers came later than the deadline + 100 ms, by status, beside the load generator's own
 * event-loop delay (it shares the machine). `BENCH_ROUNDS` (default 2) alternates the builds that many times, so a
 * comparison is made in one run on one machine.
 */
import { ServerNodeFlags } from "../src/server/Workers.js"
import { createBenchDatabase } from "./support/BenchDatabase.js"
import { seedOrganizations } from "./support/BenchSeed.js"
import { runLoad, runOpenLoop } from "./support/Load.js"
import { runBody, runRequests } from "./support/RunRequests.js"
import { benchServiceEnv, startNode } from "./support/Processes.js"

const scripts = (process.env.BENCH_SERVICE_SCRIPTS ?? "dist/main.mjs").split(",").filter((script) => script !== "")
const rate = Number(process.env.BENCH_RATE ?? 2_000)
const rounds = Number(process.env.BENCH_ROUNDS ?? 2)

const oneBuild = async (script: string) => {
  const database = await createBenchDatabase()
  const upstream = await startNode("bench/upstream.ts", { LATENCY_MS: "20" })
  const service = await startNode(script, {
    ...benchServiceEnv(database.url, upstream.url),
    // 16 connections for the main pool and 8 for the asynchronous-commit writes (src/db/PgPool.ts, poolSizes).
    DATABASE_POOL_SIZE: "24"
  }, "/readyz", ServerNodeFlags)
  try {
    const organizations = await seedOrganizations(database.url, 100, 1_000_000_000_000, "overload")
    const warm = await runLoad({
      baseUrl: service.url,
      connections: 64,
      seconds: 4,
      warmupSeconds: 1,
      request: runRequests(organizations, "overload")
    })
    const row = await runOpenLoop({
      baseUrl: service.url,
      ratePerSecond: rate,
      seconds: 3,
      lateAfterMs: 2_100,
      request: runRequests(organizations, "overload", runBody({ deadline_ms: 2_000 }))
    })
    const late = Object.entries(row.lateByStatus).map(([status, count]) => `${status}x${count}`).join(" ") || "none"
    const statuses = Object.entries(row.statuses).map(([status, count]) => `${status}x${count}`).join(" ")
    console.log(`${script}: warm-up ${warm.perSecond.toFixed(0)} runs/s at 64 in flight; offered ${rate}/s for 3 s: ` +
      `${row.late} of ${row.sent} later than deadline + 100 ms (${late}), ${statuses}, p99 ${row.p99.toFixed(0)} ms, ` +
      `max ${row.max.toFixed(0)} ms; the generator's event-loop delay p99 ${row.generatorLag.p99.toFixed(0)} ms, ` +
      `max ${row.generatorLag.max.toFixed(0)} ms, ${row.connections} connections opened`)
  } finally {
    await service.stop()
    await upstream.stop()
    await database.drop()
  }
}

const main = async () => {
  console.log(`overload: ${rate} runs/s offered for 3 s, deadline_ms 2000, upstream 20 ms, 100 organizations; ` +
    `${rounds} round(s) of ${scripts.join(", ")}`)
  for (let round = 0; round < rounds; round++) {
    for (const script of scripts) await oneBuild(script)
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
