/**
 * `npm run bench:embedded`: decision runs one at a time on the embedded database (PGlite in a fresh `DATA_DIR`, the
 * service exactly as `npm start` runs it with no `DATABASE_URL`) against the benchmarks' upstream at 0 ms and 20 ms,
 * beside the same chat request sent straight to the upstream in the same run. Prints the latency the service adds
 * at p50 and p99 and the Server-Timing parts (admission, upstream, settlement). Target: at most 10 ms added at p50.
 * `BENCH_SERVER` names another server script to start instead of `dist/main.mjs` (a `.ts` one runs under tsx), e.g.
 * another checkout's `src/main.ts`, to compare builds on the same machine in the same hour.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ServerNodeFlags } from "../src/server/Workers.js"
import { seedOrganizations } from "./support/BenchSeed.js"
import { runLoad } from "./support/Load.js"
import { chatBody, runRequests } from "./support/RunRequests.js"
import { startNode } from "./support/Processes.js"

const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const chatRequest = () => ({ method: "POST", path: "/v1/chat/completions", headers: { "content-type": "application/json" }, body: chatBody })
const fmt = (value: number) => (Number.isFinite(value) ? value.toFixed(2) : "-")

/** The embedded database's socket, as its owner's lock file names it, as a `pg` connection string. */
const embeddedUrl = (dataDir: string) => {
  const owner = JSON.parse(readFileSync(join(dataDir, "embedded.lock"), "utf8")) as { host: string; port: number }
  return `postgres://postgres@localhost/postgres?host=${encodeURIComponent(owner.host)}&port=${owner.port}`
}

const main = async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "arbiter-bench-embedded-"))
  const upstream = await startNode("bench/upstream.ts", { LATENCY_MS: "0" })
  const service = await startNode(process.env.BENCH_SERVER ?? "dist/main.mjs", {
    DATA_DIR: dataDir,
    BILLING_PROVIDER: "local",
    DECISION_PROVIDER: "openai",
    DECISION_PROVIDER_URL: `${upstream.url}/v1`,
    DECISION_PROVIDER_MODEL: "bench",
    LOG_LEVEL: "error"
  }, "/readyz", ServerNodeFlags)
  try {
    const organizations = await seedOrganizations(embeddedUrl(dataDir), 4, 1_000_000_000_000, "embedded")
    console.log(`decision runs one at a time on the embedded database (${dataDir}), ${seconds} s per row after a 2 s warm-up`)
    for (const latency of [0, 20]) {
      await fetch(`${upstream.url}/__latency?ms=${latency}`, { method: "POST" })
      const direct = await runLoad({ baseUrl: upstream.url, connections: 1, seconds, request: chatRequest })
      const single = await runLoad({ baseUrl: service.url, connections: 1, seconds, request: runRequests(organizations, "embedded") })
      const timing = ["admit", "upstream", "settle", "total"]
        .map((name) => `${name} p50 ${fmt(single.serverTiming[name]?.p50 ?? NaN)}`).join(" | ")
      const statuses = Object.entries(single.statuses).map(([status, count]) => `${status}x${count}`).join(" ")
      console.log(`\n== upstream latency ${latency} ms`)
      console.log(`upstream direct   p50 ${fmt(direct.p50)} ms  p99 ${fmt(direct.p99)} ms`)
      console.log(`through service   p50 ${fmt(single.p50)} ms  p99 ${fmt(single.p99)} ms  ${statuses}`)
      console.log(`added latency     p50 ${fmt(single.p50 - direct.p50)} ms  p99 ${fmt(single.p99 - direct.p99)} ms   (target: p50 <= 10)`)
      console.log(`server-timing     ${timing}`)
    }
  } finally {
    await service.stop()
    await upstream.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

await main()
