/**
 * `npm run bench`: GET /readyz through the full service (every layer `npm start` runs) beside a bare node:http
 * server running the same database queries, in the same run, on the same PostgreSQL; prints requests/s and p50/p99
 * latency of each at two concurrencies, and their ratio. The baseline later benchmarks extend.
 */
import { runLoad, type LoadResult } from "./support/Load.js"
import { createBenchDatabase } from "./support/BenchDatabase.js"
import { startNode } from "./support/Processes.js"

const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const row = (name: string, connections: number, result: LoadResult) =>
  `${name.padEnd(22)} ${String(connections).padStart(3)}  ${result.perSecond.toFixed(0).padStart(8)}  ${
    result.p50.toFixed(2).padStart(7)
  }  ${result.p99.toFixed(2).padStart(7)}  ${String(result.errors + (result.requests - (result.statuses[200] ?? 0))).padStart(6)}`

const main = async () => {
  const database = await createBenchDatabase()
  const service = await startNode("src/main.ts", { DATABASE_URL: database.url, WORKERS: "1",
    BILLING_PROVIDER: "local", LOG_LEVEL: "warn" }, "/readyz")
  const bare = await startNode("bench/bare-readyz.ts", { DATABASE_URL: database.url })
  try {
    console.log(`GET /readyz, ${seconds} s per row after a 2 s warm-up (closed loop, keep-alive)`)
    console.log(`${"server".padEnd(22)} ${"c".padStart(3)}  ${"req/s".padStart(8)}  ${"p50 ms".padStart(7)}  ${"p99 ms".padStart(7)}  ${"non-200".padStart(6)}`)
    for (const connections of [1, 32]) {
      const request = () => ({ method: "GET", path: "/readyz" })
      const full = await runLoad({ baseUrl: service.url, connections, seconds, request })
      const baseline = await runLoad({ baseUrl: bare.url, connections, seconds, request })
      console.log(row("arbiter (full stack)", connections, full))
      console.log(row("bare node:http + pg", connections, baseline))
      console.log(
        `${"ratio full/bare".padEnd(22)} ${String(connections).padStart(3)}  ${
          (full.perSecond / baseline.perSecond).toFixed(2).padStart(8)
        }  ${(full.p50 / baseline.p50).toFixed(2).padStart(7)}  ${(full.p99 / baseline.p99).toFixed(2).padStart(7)}`
      )
    }
  } finally {
    await service.stop()
    await bare.stop()
    await database.drop()
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
