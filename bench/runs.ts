/**
 * `npm run bench:runs`: decision runs (one question, a fresh idempotency key each, a ~1.4 KB body) through the whole
 * service (a child process exactly as `npm start` runs it, on PostgreSQL) against a lean OpenAI-compatible upstream
 * (its own process), beside the same chat request sent straight to the upstream in the same run. For 0 ms and 20 ms
 * of upstream latency it prints the added latency at one request in flight, the throughput at 64 in flight across
 * 100 organizations and for one busy organization, the service's CPU per run and the Server-Timing figures; then
 * checks that admission never over-admits (credit for exactly 50 ceilings, 300 concurrent runs) and that under 4x
 * overload every request is answered by its deadline plus 100 ms; and it checks the money invariants at the end, then
 * runs the operator CLI's `ledger audit` (every money rule) on the bench database.
 * Where the overload guard shed requests, a row says how many past the adaptive limit and how many on event-loop lag,
 * read from each worker's metrics listener (`METRICS_PORT` and the ports after it).
 */
import { spawnSync } from "node:child_process"
import pg from "pg"
import { ServerNodeFlags } from "../src/server/Workers.js"
import { createBenchDatabase } from "./support/BenchDatabase.js"
import { type BenchOrganization, seedHistory, seedOrganizations } from "./support/BenchSeed.js"
import { runLoad, runOpenLoop, type LoadResult } from "./support/Load.js"
import { chatBody, runBody, runRequests } from "./support/RunRequests.js"
import { benchServiceEnv, cpuMillisOfCommand, cpuMillisOfTree, freePort, startNode } from "./support/Processes.js"

const seconds = Number(process.env.BENCH_SECONDS ?? 5)

const runRequest = (organizations: ReadonlyArray<BenchOrganization>) => runRequests(organizations, "bench")
const chatRequest = () => ({ method: "POST", path: "/v1/chat/completions", headers: { "content-type": "application/json" }, body: chatBody })

const fmt = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : "-")
/** Shed requests by the guard's reason, summed over the service's workers (the instance's one `/metrics`). */
interface Sheds {
  readonly limit: number
  readonly lag: number
}

const ShedLine = /^arbiter_http_shed_total\{[^}]*reason="(limit|lag)"[^}]*\} (\d+)$/gm

/** Reads the instance's shed counters (`METRICS_PORT`: under WORKERS the primary sums its workers'). */
const readSheds = async (metricsPort: number): Promise<Sheds> => {
  const counts = { limit: 0, lag: 0 }
  const text = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((response) => response.text())
  for (const [, reason, count] of text.matchAll(ShedLine)) counts[reason as keyof Sheds] += Number(count)
  return counts
}

let shedsOfRow: Sheds = { limit: 0, lag: 0 }

/** Runs one row and notes what the guard shed during it, and why. */
const row = async <A>(metricsPort: number, measure: () => Promise<A>): Promise<A> => {
  const before = await readSheds(metricsPort)
  const result = await measure()
  const after = await readSheds(metricsPort)
  shedsOfRow = { limit: after.limit - before.limit, lag: after.lag - before.lag }
  return result
}

const shedText = () =>
  shedsOfRow.limit + shedsOfRow.lag > 0 ? ` (shed during the row and its warm-up: ${shedsOfRow.limit} past the limit, ${shedsOfRow.lag} on event-loop lag)` : ""

const statusText = (result: LoadResult) =>
  Object.entries(result.statuses).map(([status, count]) => `${status}x${count}`).join(" ") +
  (result.errors > 0 ? ` errors x${result.errors}` : "") + ((result.statuses[503] ?? 0) > 0 ? shedText() : "")

/** Runs answered 200 per second: shed (503) and refused answers are fast and cheap, so they are not throughput. */
const completedPerSecond = (result: LoadResult) => (result.statuses[200] ?? 0) / result.seconds

/** CPU per answer, and per completed run (all the CPU the row used, over the runs answered 200). */
const cpuLine = (result: LoadResult) => {
  const perCompleted = (name: string) =>
    ((result.cpuPerRequest[name] ?? NaN) * result.requests) / Math.max(1, result.statuses[200] ?? 0)
  return `CPU per answer: service ${fmt(result.cpuPerRequest["service"] ?? NaN, 3)} ms, PostgreSQL ` +
    `${fmt(result.cpuPerRequest["postgres"] ?? NaN, 3)} ms; per completed run: service ${fmt(perCompleted("service"), 3)} ms, ` +
    `PostgreSQL ${fmt(perCompleted("postgres"), 3)} ms`
}

const throughput = (result: LoadResult) =>
  `${fmt(completedPerSecond(result), 0)} completed runs/s (${fmt(result.perSecond, 0)} answers/s)`

const timingLine = (result: LoadResult) =>
  ["admit", "upstream", "settle", "gateway", "total"]
    .map((name) => `${name} p50 ${fmt(result.serverTiming[name]?.p50 ?? NaN)} p99 ${fmt(result.serverTiming[name]?.p99 ?? NaN)}`)
    .join(" | ")

/** Limits every key of an organization, high enough never to refuse: the cost of checking them, not a refusal. */
const limitKeys = async (databaseUrl: string, organizationId: string) => {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  await client.query(
    `UPDATE key_accounts SET spend_limit_micros = 1000000000000000, token_limit = 1000000000000, runs_per_minute = 1000000
      WHERE organization_id = $1`,
    [organizationId]
  )
  await client.end()
}

const main = async () => {
  const database = await createBenchDatabase()
  const upstream = await startNode("bench/upstream.ts", { LATENCY_MS: "0" })
  // The instance's metrics (METRICS_PORT): the bench reads why requests were shed.
  const metricsPort = await freePort()
  // The server as `npm start` runs it: the bundle, with the server's V8 flags.
  const service = await startNode("dist/main.mjs", {
    ...benchServiceEnv(database.url, upstream.url),
    // 16 connections for the main pool and 8 for the asynchronous-commit writes (src/db/PgPool.ts, poolSizes).
    DATABASE_POOL_SIZE: "24",
    METRICS_PORT: String(metricsPort)
  }, "/readyz", ServerNodeFlags)
  const setLatency = (ms: number) => fetch(`${upstream.url}/__latency?ms=${ms}`, { method: "POST" })
  try {
    const spread = await seedOrganizations(database.url, 100, 1_000_000_000_000, "spread")
    const [busy] = await seedOrganizations(database.url, 1, 1_000_000_000_000, "busy")
    const [busyLimited] = await seedOrganizations(database.url, 1, 1_000_000_000_000, "limited")
    await seedHistory(database.url, [...spread, busy!, busyLimited!], 500)
    await limitKeys(database.url, busyLimited!.organizationId)
    console.log(`decision runs: one question, ~${runBody().length} B body, ${seconds} s per row after a 2 s warm-up; 101 organizations with 500 settled runs each already stored`)
    console.log(`service pid ${service.process.pid}, upstream pid ${upstream.process.pid}, PostgreSQL ${database.url.replace(/\/\/.*@/, "//")}`)
    const cpu = { service: () => cpuMillisOfTree(service.process.pid!), postgres: () => cpuMillisOfCommand("postgres") }
    let capacity = 0
    for (const latency of [0, 20]) {
      await setLatency(latency)
      console.log(`\n== upstream latency ${latency} ms`)
      const direct = await runLoad({ baseUrl: upstream.url, connections: 1, seconds, request: chatRequest })
      const single = await row(metricsPort, () => runLoad({ baseUrl: service.url, connections: 1, seconds, request: runRequest(spread), cpu }))
      console.log(`1 in flight   upstream direct  p50 ${fmt(direct.p50)} ms  p99 ${fmt(direct.p99)} ms  (${fmt(direct.perSecond, 0)}/s)`)
      console.log(`1 in flight   through service  p50 ${fmt(single.p50)} ms  p99 ${fmt(single.p99)} ms  (${fmt(single.perSecond, 0)}/s)  ${statusText(single)}`)
      console.log(`              added latency    p50 ${fmt(single.p50 - direct.p50)} ms  p99 ${fmt(single.p99 - direct.p99)} ms   (targets at 20 ms: p50 <= 1.5, p99 <= 5)`)
      console.log(`              server-timing    ${timingLine(single)}`)
      console.log(`              ${cpuLine(single)}`)
      const many = await row(metricsPort, () => runLoad({ baseUrl: service.url, connections: 64, seconds, request: runRequest(spread), cpu }))
      console.log(`64 in flight  100 organizations ${throughput(many)}  p50 ${fmt(many.p50)} p99 ${fmt(many.p99)} ms  ${statusText(many)}   (target: >= 1000/s)`)
      console.log(`              server-timing    ${timingLine(many)}`)
      console.log(`              ${cpuLine(many)}   (target: service <= 0.8 ms)`)
      const hot = await row(metricsPort, () => runLoad({ baseUrl: service.url, connections: 64, seconds, request: runRequest([busy!]), cpu }))
      console.log(`64 in flight  one organization  ${throughput(hot)}  p50 ${fmt(hot.p50)} p99 ${fmt(hot.p99)} ms  ${statusText(hot)}   (target: >= 600/s)`)
      console.log(`              server-timing    ${timingLine(hot)}`)
      console.log(`              ${cpuLine(hot)}`)
      const limited = await row(metricsPort, () => runLoad({ baseUrl: service.url, connections: 64, seconds, request: runRequest([busyLimited!]), cpu }))
      console.log(`64 in flight  one limited key   ${throughput(limited)}  p50 ${fmt(limited.p50)} p99 ${fmt(limited.p99)} ms  ${statusText(limited)}   (its key has spend, token and rate limits: its runs are batched under its lock)`)
      console.log(`              server-timing    ${timingLine(limited)}`)
      console.log(`              ${cpuLine(limited)}`)
      capacity = completedPerSecond(many)
    }

    console.log("\n== admission never over-admits")
    await setLatency(3_000)
    const [scarce] = await seedOrganizations(database.url, 1, 50 * 20_000, "scarce")
    const burst = await row(metricsPort, () => Promise.all(Array.from({ length: 300 }, () => fetch(`${service.url}/v1/runs`, runRequest([scarce!])()).then((response) => response.status))))
    const admitted = burst.filter((status) => status === 200).length
    const refused = burst.filter((status) => status === 402).length
    const shed = burst.filter((status) => status === 503).length
    const late = burst.filter((status) => status === 504).length
    console.log(`credit for 50 ceilings, 300 concurrent runs: ${admitted} admitted, ${refused} refused 402, ${shed} shed 503 by ` +
      `the overload guard${shedText()}, ${late} 504 before admission, ${300 - admitted - refused - shed - late} other (expected: 50 ` +
      `admitted, never more; the rest 402, 503 or 504)`)

    console.log("\n== 4x overload, deadline_ms 2000, upstream 20 ms")
    await setLatency(20)
    const rate = Math.max(50, Math.round(capacity * 4))
    const overload = await row(metricsPort, () => runOpenLoop({
      baseUrl: service.url,
      ratePerSecond: rate,
      seconds: 3,
      lateAfterMs: 2_100,
      request: runRequests(spread, "bench", runBody({ deadline_ms: 2_000 }))
    }))
    console.log(`offered ${rate}/s for 3 s: ${overload.answered}/${overload.sent} answered, p50 ${fmt(overload.p50)} ms, p99 ${fmt(overload.p99)} ms, max ${fmt(overload.max)} ms, later than deadline + 100 ms: ${overload.late}, errors ${overload.errors}  ${Object.entries(overload.statuses).map(([s, c]) => `${s}x${c}`).join(" ")}${shedText()}`)
    console.log(`              late by status: ${Object.entries(overload.lateByStatus).map(([s, c]) => `${s}x${c}`).join(" ") || "none"}; the late answers' own Server-Timing total p50 ${fmt(overload.lateServerTotal.p50)} ms, max ${fmt(overload.lateServerTotal.max)} ms`)
    if (overload.late > 0) {
      const parts = Object.entries(overload.lateServerParts).filter(([name]) => name !== "total")
        .map(([name, part]) => `${name} p50 ${fmt(part.p50)} max ${fmt(part.max)}`).join(" | ")
      console.log(`              the late answers' parts: ${parts}; sent ${fmt(overload.lateSentAt.first, 0)} to ${fmt(overload.lateSentAt.last, 0)} ms into the row`)
    }
    console.log(`              the load generator (same machine): ${overload.connections} connections opened, its own event-loop delay p99 ${fmt(overload.generatorLag.p99)} ms, max ${fmt(overload.generatorLag.max)} ms`)

    await new Promise((wake) => setTimeout(wake, 3_000))
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    const { rows } = await client.query<{ mismatched: string; held: string; reserved: string; deadlocks: string }>(`SELECT
      (SELECT count(*) FROM credit_accounts a WHERE a.balance_micros <> COALESCE((SELECT sum(amount_micros) FROM credit_transactions t WHERE t.organization_id = a.organization_id), 0)) AS mismatched,
      (SELECT count(*) FROM runs WHERE held) AS held,
      (SELECT COALESCE(sum(credit_held), 0) FROM ledger_leases) AS reserved,
      (SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()) AS deadlocks`)
    await client.end()
    console.log(`\nmoney: ${rows[0]!.mismatched} balances differing from their transactions, ${rows[0]!.held} runs still holding, ${rows[0]!.reserved} micro-USD still reserved (all expected 0)`)
    console.log(`locks: ${rows[0]!.deadlocks} deadlocks PostgreSQL broke in the bench database (expected 0: each one stalls its transactions for deadlock_timeout)`)
    console.log(`ledger audit: ${ledgerAudit(database.url)}`)
  } finally {
    await service.stop()
    await upstream.stop()
    await database.drop()
  }
}

/** The operator CLI's `ledger audit` of the bench database (every money rule), summed up in one line. */
const ledgerAudit = (url: string): string => {
  const audit = spawnSync(process.execPath, ["dist/cli.mjs", "ledger", "audit"], {
    env: { PATH: process.env.PATH ?? "", DATABASE_URL: url },
    encoding: "utf8"
  })
  if (audit.stdout === "") return `could not run (exit ${audit.status}): ${audit.stderr.trim()}`
  const report = JSON.parse(audit.stdout) as { checks: Array<{ name: string; violations: number }> }
  const broken = report.checks.filter((check) => check.violations > 0)
  return `${report.checks.length} rules, ${broken.length} broken` +
    (broken.length === 0 ? " (expected 0)" : `: ${broken.map((check) => `${check.name} x${check.violations}`).join(", ")}`)
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
