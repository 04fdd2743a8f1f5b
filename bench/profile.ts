/**
 * `npm run bench:profile`: where the service spends its CPU on the hot path. Starts the service exactly as
 * `bench:runs` does (PostgreSQL, an OpenAI-compatible upstream in its own process) under `node --cpu-prof`, sends
 * one-question decision runs from `BENCH_CONNECTIONS` connections (default 64) for `BENCH_SECONDS` (default 10),
 * stops it, and prints the CPU per run (the bundle `npm start` runs; `BENCH_SERVICE_SCRIPT` runs another entry point, e.g. src/main.ts under tsx) and the top functions and files by self time from the profile (the profile
 * itself is kept in `BENCH_PROFILE_DIR`, default a temporary folder, for a flame graph viewer).
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ServerNodeFlags } from "../src/server/Workers.js"
import { createBenchDatabase } from "./support/BenchDatabase.js"
import { seedOrganizations } from "./support/BenchSeed.js"
import { runLoad } from "./support/Load.js"
import { runRequests } from "./support/RunRequests.js"
import { benchServiceEnv, cpuMillis, startNode } from "./support/Processes.js"

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly children?: ReadonlyArray<number>
}

interface Profile {
  readonly startTime: number
  readonly endTime: number
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64)
const top = Number(process.env.BENCH_TOP ?? 30)

const shortFile = (url: string) => url.replace(/^file:\/\//, "").replace(/^.*node_modules\//, "~/").replace(process.cwd() + "/", "")

/** Self time (ms) by function and by file, from the samples of a V8 CPU profile taken in its last `windowMs`. */
const selfTimes = (profile: Profile, windowMs: number) => {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const self = new Map<number, number>()
  const from = profile.endTime - windowMs * 1000
  let at = profile.startTime
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0
    at += delta
    if (at >= from) self.set(id, (self.get(id) ?? 0) + delta / 1000)
  })
  const functions = new Map<string, number>()
  const files = new Map<string, number>()
  for (const [id, ms] of self) {
    const frame = byId.get(id)!.callFrame
    const file = frame.url === "" ? `(${frame.functionName || "native"})` : shortFile(frame.url)
    const name = `${frame.functionName || "(anonymous)"}  ${file}:${frame.lineNumber + 1}`
    functions.set(name, (functions.get(name) ?? 0) + ms)
    files.set(file, (files.get(file) ?? 0) + ms)
  }
  const total = [...self.values()].reduce((sum, ms) => sum + ms, 0)
  return { functions, files, total }
}

const table = (entries: Map<string, number>, total: number, count: number) =>
  [...entries].sort((a, b) => b[1] - a[1]).slice(0, count)
    .map(([name, ms]) => `${ms.toFixed(0).padStart(7)} ms ${((ms / total) * 100).toFixed(1).padStart(5)}%  ${name}`)
    .join("\n")

const main = async () => {
  let measuredFrom = 0
  let stoppedAt = 0
  const database = await createBenchDatabase()
  const dir = process.env.BENCH_PROFILE_DIR ?? mkdtempSync(join(tmpdir(), "arbiter-profile-"))
  const upstream = await startNode("bench/upstream.ts", { LATENCY_MS: String(process.env.BENCH_UPSTREAM_MS ?? 0) })
  const service = await startNode(process.env.BENCH_SERVICE_SCRIPT ?? "dist/main.mjs", {
    ...benchServiceEnv(database.url, upstream.url),
    WORKERS: "1"
  }, "/readyz", ["--cpu-prof", "--cpu-prof-dir", dir, ...ServerNodeFlags])
  try {
    const organizations = await seedOrganizations(database.url, 10, 1_000_000_000_000, "profile")
    const warmupSeconds = 2
    const result = await runLoad({
      warmupSeconds,
      baseUrl: service.url,
      connections,
      seconds,
      cpu: { service: () => cpuMillis(service.process.pid!) },
      request: runRequests(organizations, "profile")
    })
    measuredFrom = Date.now() - seconds * 1000
    console.log(`${connections} in flight for ${seconds} s: ${result.perSecond.toFixed(0)} runs/s, ` +
      `service CPU ${(result.cpuPerRequest["service"] ?? NaN).toFixed(3)} ms per run, statuses ${JSON.stringify(result.statuses)}`)
  } finally {
    stoppedAt = Date.now()
    await service.stop()
    await upstream.stop()
    await database.drop()
  }
  // One profile per thread (`CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile`): the main thread's is thread 0.
  const file = readdirSync(dir).filter((name) => /\.0\.\d+\.cpuprofile$/.test(name)).sort().pop()
  if (file === undefined) throw new Error(`no profile written in ${dir}`)
  // The measured window, and the moments between its end and the service's stop (the profile ends at its exit).
  const windowMs = Date.now() - measuredFrom
  const { files, functions, total } = selfTimes(JSON.parse(readFileSync(join(dir, file), "utf8")) as Profile, windowMs)
  console.log(`\nprofile ${join(dir, file)}: ${total.toFixed(0)} ms sampled in the measured window ` +
    `(and the ${((Date.now() - stoppedAt) / 1000).toFixed(1)} s of stopping)`)
  console.log(`\nself time by function:\n${table(functions, total, top)}`)
  console.log(`\nself time by file:\n${table(files, total, top)}`)
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
