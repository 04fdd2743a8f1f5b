/**
 * `npm run bench:router`: first the time of one `rank` call over the shipped catalog per policy (bench/router-
 * ranking.ts); then a selection with the built-in model, one at a time, on PostgreSQL and on the embedded
 * database, with the share of each part (bench/router-default.ts); then `POST /v1/router/select` end to end
 * through the full service (a child process, exactly as `npm start` runs it, on a fresh PostgreSQL database)
 * answering from a scripted OpenAI-compatible upstream with no added latency, beside bare decision runs of
 * `POST /v1/runs` in the same run: one question, and nine questions in two stages (the same model calls a select
 * makes here: family, two task types, difficulty, five facets). The difference between select and the
 * nine-question run is the router's own cost (validation, eligibility, ranking, storing the selection). The
 * upstream runs in this process beside the load generator.
 */
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { startFakeUpstream } from "../test/support/FakeUpstream.js"
import { printDefaultSelectTimes } from "./router-default.js"
import { printRankingTimes } from "./router-ranking.js"
import { createBenchDatabase } from "./support/BenchDatabase.js"
import { type LoadRequest, type LoadResult, runLoad } from "./support/Load.js"
import { startNode } from "./support/Processes.js"

const seconds = Number(process.env.BENCH_SECONDS ?? 5)

const noul = (instructions: string) => ({ type: "noul", instructions })

/** Nine questions in two stages, as a classification of a coding task reads them. */
const nineQuestions = {
  family: { type: "choice", instructions: "Which family?", criteria: { coding: null, math: null, writing: null } },
  difficulty: { type: "score", instructions: "How hard?", criteria: ["easy", "moderate", "hard"] },
  code: noul("Needs code?"),
  long: noul("Needs long context?"),
  steps: noul("Multi-step?"),
  language: noul("Not English?"),
  tools: noul("Needs tools?"),
  coding: { ...noul("Is it code generation?"), depends_on: ["family"] },
  math: { ...noul("Is it applied math?"), depends_on: ["family"] }
}

const task = "Write a Python function that merges overlapping intervals, with unit tests."

const row = (name: string, connections: number, result: LoadResult) => {
  const timing = (part: string) => (result.serverTiming[part]?.p50 ?? NaN).toFixed(2).padStart(8)
  return `${name.padEnd(26)} ${String(connections).padStart(3)}  ${result.perSecond.toFixed(0).padStart(7)}  ${
    result.p50.toFixed(2).padStart(7)
  }  ${result.p99.toFixed(2).padStart(7)}  ${timing("upstream")}  ${timing("gateway")}  ${
    String(result.errors + result.requests - (result.statuses[200] ?? 0)).padStart(7)
  }`
}

const createOrganization = (databaseUrl: string): string => {
  const output = execFileSync(process.execPath, [
    "--import", "tsx", "src/cli.ts", "org", "create", "--name", "bench", "--owner-email", "bench@example.com"
  ], { env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: "warn" }, encoding: "utf8" })
  return JSON.parse(output).key.secret
}

const main = async () => {
  Effect.runSync(printRankingTimes)
  await printDefaultSelectTimes()
  const upstream = await startFakeUpstream()
  const database = await createBenchDatabase()
  const service = await startNode("src/main.ts", {
    DATABASE_URL: database.url,
    BILLING_PROVIDER: "local",
    WORKERS: "1",
    LOG_LEVEL: "warn",
    DECISION_PROVIDER: "openai",
    DECISION_PROVIDER_URL: upstream.url,
    DECISION_PROVIDER_MODEL: "bench-judge"
  }, "/readyz")
  try {
    const secret = createOrganization(database.url)
    let counter = 0
    const post = (path: string, body: unknown, keyed: boolean) => (): LoadRequest => ({
      method: "POST",
      path,
      headers: {
        authorization: `Bearer ${secret}`,
        "content-type": "application/json",
        ...(keyed ? { "idempotency-key": `bench-${Date.now()}-${++counter}` } : {})
      },
      body: JSON.stringify(body)
    })
    const scenarios: ReadonlyArray<[string, () => LoadRequest]> = [
      ["POST /v1/runs, 1 question", post("/v1/runs", { kind: "decision", state: task, questions: { code: noul("Needs code?") } }, true)],
      ["POST /v1/runs, 9 questions", post("/v1/runs", { kind: "decision", state: task, questions: nineQuestions }, true)],
      ["POST /v1/router/select", post("/v1/router/select", { prompt: task, policy: "balanced" }, false)]
    ]
    console.log(`\nEnd to end against a scripted upstream at 0 ms, PostgreSQL, ${seconds} s per row after a 2 s warm-up`)
    console.log(`${"request".padEnd(26)} ${"c".padStart(3)}  ${"req/s".padStart(7)}  ${"p50 ms".padStart(7)}  ${"p99 ms".padStart(7)}  ${
      "upstr p50".padStart(8)
    }  ${"gatew p50".padStart(8)}  ${"non-200".padStart(7)}`)
    for (const connections of [1, 8]) {
      for (const [name, request] of scenarios) {
        const result = await runLoad({ baseUrl: service.url, connections, seconds, request })
        console.log(row(name, connections, result))
      }
    }
    const calls = upstream.requests().length
    console.log(`\n${calls} upstream calls in all; upstr and gatew are the service's Server-Timing parts (ms)`)
  } finally {
    await service.stop()
    await upstream.close()
    await database.drop()
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
