/**
 * `npm run bench:round-trips`: the floor a run's two ledger round trips stand on, on this machine. One `pg` client
 * on a fresh database sends a trivial statement at a time: `SELECT 1`, a one-row insert with an asynchronous commit
 * (admission's kind of write) and one with a synchronous commit (settlement's), first back to back, then each after
 * an idle gap of `BENCH_GAP_MS` (default 20, the benchmarks' upstream latency), as at one run in flight, where the
 * processes idle between a run's round trips. It prints the p50 and p90 of each (`BENCH_STATEMENTS` each, default
 * 300). Arbiter's own statements cost more than these; nothing on the hot path can cost less.
 */
import pg from "pg"
import { createBenchDatabase } from "./support/BenchDatabase.js"

const count = Number(process.env.BENCH_STATEMENTS ?? 300)
const gapMs = Number(process.env.BENCH_GAP_MS ?? 20)

const statements = [
  { name: "SELECT 1", text: "SELECT 1", commit: "on" },
  { name: "insert, asynchronous commit", text: "INSERT INTO floor_rows (v) VALUES ('x')", commit: "off" },
  { name: "insert, synchronous commit", text: "INSERT INTO floor_rows (v) VALUES ('x')", commit: "on" }
] as const

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!

const main = async () => {
  const database = await createBenchDatabase()
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  try {
    await client.query("CREATE TABLE floor_rows (id bigserial PRIMARY KEY, v text NOT NULL)")
    console.log(`round trips: ${count} statements each, one at a time, back to back and after ${gapMs} ms idle`)
    for (const gap of [0, gapMs]) {
      for (const [index, statement] of statements.entries()) {
        await client.query(`SET synchronous_commit = ${statement.commit}`)
        const times: Array<number> = []
        for (let sent = 0; sent < count; sent++) {
          if (gap > 0) await new Promise((wake) => setTimeout(wake, gap))
          const started = performance.now()
          await client.query({ name: `floor_${index}`, text: statement.text })
          times.push(performance.now() - started)
        }
        times.sort((a, b) => a - b)
        console.log(`  ${statement.name.padEnd(28)} ${gap === 0 ? "back to back" : `after ${gap} ms idle`}: ` +
          `p50 ${percentile(times, 0.5).toFixed(3)} ms, p90 ${percentile(times, 0.9).toFixed(3)} ms`)
      }
    }
  } finally {
    await client.end()
    await database.drop()
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
