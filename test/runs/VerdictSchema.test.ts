/**
 * POST /v1/runs with a verdict schema (decisions.md, Verdict runs): checking the schema is bounded work that never
 * holds the event loop. Schemas past a bound (2,000 schema nodes, 256 patterns, 32 levels) answer
 * `400 invalid_verdict_schema` naming it, storing and charging nothing, while `/healthz` keeps answering; a valid
 * schema, however wide its `enum` or long its reference chain, passes and answers `503 no_route_available`. The service
 * runs in its own process, so `/healthz` measures its event loop alone.
 */
import { SqlClient } from "effect/sql"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Result } from "effect"
import { Worker } from "node:worker_threads"
import { ServerAddress } from "../../src/server/Listen.js"
import { checkVerdictSchema, patternCacheSize, patternProblem } from "../../src/runs/VerdictSchema.js"
import { codeOf } from "../support/Api.js"
import { ChildServers, ChildServersLive } from "../support/ChildServers.js"
import { grantCredit } from "../support/Invariants.js"
import { freshKey, postRun } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"

const range = (n: number) => Array.from({ length: n }, (_, i) => i)

const nested = (levels: number, leaf: unknown = { type: "string" }): unknown => {
  let schema = leaf
  for (let level = 1; level < levels; level++) schema = { not: schema }
  return schema
}

/** `$defs` d0 .. d(n-1), each a reference to the next, the last to d0, and the root a reference to d0. */
const referenceChain = (n: number) => ({
  $ref: "#/$defs/d0",
  $defs: Object.fromEntries(range(n).map((i) => [`d${i}`, { $ref: `#/$defs/d${(i + 1) % n}` }]))
})

/** Schemas past a bound, each with the words of the bound its refusal names. */
const Hostile: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
  [
    "3,000 patternProperties",
    { type: "object", patternProperties: Object.fromEntries(range(3_000).map((i) => [`^p${i}[a-z]+$`, { type: "string" }])) },
    "more than 256 patterns"
  ],
  ["2,001 schema nodes", { properties: Object.fromEntries(range(2_000).map((i) => [`k${i}`, { type: "string" }])) }, "more than 2,000 schema nodes"],
  ["257 patterns", { anyOf: range(257).map((i) => ({ type: "string", pattern: `^(a|b){${i}}c*$` })) }, "more than 256 patterns"],
  ["a chain 200 levels deep", nested(200) as Record<string, unknown>, "nests more than 32 levels"],
  [
    "an enum of 100,000 items beside 2,001 schema nodes",
    { enum: range(100_000), properties: Object.fromEntries(range(2_000).map((i) => [`k${i}`, true])) },
    "more than 2,000 schema nodes"
  ],
  ["a reference chain of 2,001 links", referenceChain(2_001), "more than 2,000 schema nodes"]
]

/**
 * The prober's own thread: asks `/healthz` one request after another over a kept-alive connection and records, for
 * each, when it was sent and answered (epoch milliseconds) and how long the service's main thread waited meanwhile
 * for a core it was ready to run on (the run-queue wait in `/proc/<pid>/task/<pid>/schedstat`; 0 where it cannot be
 * read), so the machine's own stalls are taken out. On a message it posts the samples and stops.
 */
const ProberSource = `
const { parentPort, workerData } = require("node:worker_threads")
const { readFileSync } = require("node:fs")
const http = require("node:http")
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
const now = () => performance.timeOrigin + performance.now()
const queued = () => {
  try {
    return Number(readFileSync("/proc/" + workerData.pid + "/task/" + workerData.pid + "/schedstat", "utf8").split(" ")[1]) / 1e6
  } catch {
    return 0
  }
}
const samples = []
let stopped = false
const probe = () => {
  if (stopped) return
  const sent = now()
  const waited = queued()
  http.get(workerData.url, { agent }, (response) => {
    response.resume()
    response.on("end", () => {
      samples.push({ sent, answered: now(), queued: queued() - waited, status: response.statusCode })
      setTimeout(probe, 2)
    })
  }).on("error", (error) => parentPort.postMessage({ error: String(error) }))
}
parentPort.once("message", () => {
  stopped = true
  agent.destroy()
  parentPort.postMessage({ samples })
})
probe()
`

interface Probe {
  readonly sent: number
  readonly answered: number
  readonly queued: number
  readonly status: number
}

/** Probes `/healthz` from its own thread while `during` runs; the samples, oldest first. */
const probingHealth = <A, E, R>(during: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const address = yield* ServerAddress
    const [service] = yield* ChildServers
    const prober = yield* Effect.acquireRelease(
      Effect.sync(() => new Worker(ProberSource, { eval: true, workerData: { url: `${address.url}/healthz`, pid: service!.process.pid } })),
      (worker) => Effect.promise(() => worker.terminate())
    )
    const result = yield* during
    const message = yield* Effect.promise(() =>
      new Promise<{ samples?: Array<Probe>; error?: string }>((resolve) => {
        prober.once("message", resolve)
        prober.postMessage("stop")
      })
    )
    assert.isUndefined(message.error, "every /healthz probe was answered")
    return { result, probes: message.samples! }
  }).pipe(Effect.scoped)

/** What a refused request must not change: the organization's runs, ledger, balance and credit transactions. */
const moneyAndRuns = (organizationId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ state: unknown }>`SELECT json_build_object(
        'runs', (SELECT count(*) FROM runs WHERE organization_id = ${organizationId}),
        'ledger', (SELECT count(*) FROM ledger_entries WHERE organization_id = ${organizationId}),
        'balance', (SELECT balance_micros FROM credit_accounts WHERE organization_id = ${organizationId}),
        'transactions', (SELECT count(*) FROM credit_transactions WHERE organization_id = ${organizationId})
      )::text AS state`,
      ([row]) => JSON.parse(String(row!.state)) as { runs: number; ledger: number; balance: number; transactions: number }
    ))

const verdict = (schema: unknown) => ({
  kind: "verdict",
  messages: [{ role: "user", content: "Summarise: the parcel is late." }],
  instructions: "Return a summary",
  schema
})

describe("checkVerdictSchema", () => {
  it("refuses each hostile shape naming its bound, and accepts each shape at its bound", () => {
    for (const [name, schema, bound] of Hostile) {
      const result = checkVerdictSchema(schema)
      assert.isTrue(Result.isFailure(result), name)
      if (Result.isFailure(result)) assert.include(result.failure.message, bound, name)
    }
    const within = [
      { properties: Object.fromEntries(range(1_999).map((i) => [`k${i}`, { type: "string" }])) },
      { anyOf: range(256).map((i) => ({ pattern: `^(a|b){${i}}c*$` })) },
      nested(32),
      referenceChain(1_999),
      { enum: range(100_000).map((i) => ({ item: [i] })) }
    ]
    for (const schema of within) assert.isTrue(Result.isSuccess(checkVerdictSchema(schema)), JSON.stringify(schema).slice(0, 80))
  })

  it("resolves references inside the document by pointer, $id and anchor, and refuses any other", () => {
    const resolved = {
      $id: "https://example.com/root.json",
      $defs: {
        "a/b": { type: "integer" },
        other: { $id: "other.json", $anchor: "name", $defs: { x: { type: "string" } } }
      },
      allOf: [
        { $ref: "#" },
        { $ref: "#/$defs/a~1b" },
        { $ref: "other.json" },
        { $ref: "other.json#name" },
        { $ref: "https://example.com/other.json#/$defs/x" },
        { $dynamicRef: "#/$defs/other" }
      ]
    }
    assert.isTrue(Result.isSuccess(checkVerdictSchema(resolved)))
    for (
      const ref of ["#/$defs/none", "https://example.com/schema.json", "other.json#nowhere", "#/$defs/a~1b/type", "#/allOf/9", "http://[x"]
    ) {
      const result = checkVerdictSchema({ ...resolved, properties: { p: { $ref: ref } } })
      assert.isTrue(Result.isFailure(result), ref)
      if (Result.isFailure(result)) assert.include(result.failure.message, "does not resolve inside the schema", ref)
    }
    const twice = checkVerdictSchema({ $defs: { a: { $id: "same.json" }, b: { $id: "same.json" } } })
    assert.isTrue(Result.isFailure(twice) && twice.failure.message.includes("more than one schema has the $id"))
  })

  it("refuses an invalid pattern or patternProperties name, its text cut in the message", () => {
    for (const schema of [{ pattern: "(" }, { patternProperties: { "[z-a]": true } }, { pattern: `${"x".repeat(100_000)}(` }]) {
      const result = checkVerdictSchema(schema)
      assert.isTrue(Result.isFailure(result), JSON.stringify(schema).slice(0, 40))
      if (Result.isFailure(result)) {
        assert.include(result.failure.message, "not a usable JSON Schema: pattern")
        assert.isBelow(result.failure.message.length, 200)
      }
    }
  })

  it("remembers each pattern's verdict, within its bounds in entries and characters", () => {
    for (const i of range(10_000)) assert.isUndefined(patternProblem(`^x${i}$`))
    assert.isAtMost(patternCacheSize().entries, 4_096)
    for (const i of range(8)) assert.isUndefined(patternProblem(`${"y".repeat(400_000)}${i}`))
    assert.isAtMost(patternCacheSize().characters, 1_048_576)
    assert.strictEqual(patternProblem("(("), patternProblem("(("))
  })
})

layer(ChildServersLive(), { excludeTestServices: true, timeout: "300 seconds" })("POST /v1/runs with a verdict schema", (it) => {
  it.effect("400 invalid_verdict_schema naming the bound, nothing stored or charged, while /healthz keeps answering", () =>
    Effect.gen(function*() {
      const organization = yield* seedOrganization({ billing: true })
      yield* grantCredit(organization.organizationId, 10_000_000)
      const before = yield* moneyAndRuns(organization.organizationId)
      const spans: Array<readonly [number, number]> = []
      const { probes } = yield* probingHealth(Effect.forEach(Hostile, ([name, schema, bound]) =>
        Effect.gen(function*() {
          const body = verdict(schema)
          // Each shape three times at once: a client that loops or fans out must not hold the service either.
          const started = Date.now()
          const responses = yield* Effect.all(range(3).map(() => postRun(organization.secret, body, freshKey())), { concurrency: "unbounded" })
          spans.push([started, Date.now()])
          for (const response of responses) {
            assert.strictEqual(response.status, 400, `${name}: ${response.text.slice(0, 200)}`)
            assert.strictEqual(codeOf(response), "invalid_verdict_schema", name)
            assert.include(response.json().error.message, bound, name)
          }
        })))
      assert.deepStrictEqual(yield* moneyAndRuns(organization.organizationId), before, "nothing stored or charged")
      const during = probes.filter((probe) => spans.some(([from, to]) => probe.answered >= from && probe.sent <= to))
      assert.isAbove(during.length, 0, "/healthz was answered while the hostile requests were in flight")
      assert.isTrue(probes.every((probe) => probe.status === 200))
      // No probe waits anywhere near a second for the service's own work (its waits for a core, the machine's stalls,
      // are taken out), where a check that compiled these schemas holds the loop for seconds.
      const held = Math.max(...probes.map((probe) => probe.answered - probe.sent - probe.queued))
      console.log(`verdict schemas: ${probes.length} /healthz probes, ${during.length} while hostile requests were in flight, longest ${held.toFixed(1)} ms beyond the service's waits for a core`)
      assert.isBelow(held, 1_000, `a /healthz probe waited ${held.toFixed(0)} ms beyond the service's waits for a core`)
    }))

  it.effect("a valid schema passes, a 30,000-item enum and a 2,000-node reference chain included: 503 no_route_available, nothing charged", () =>
    Effect.gen(function*() {
      const organization = yield* seedOrganization({ billing: true })
      yield* grantCredit(organization.organizationId, 10_000_000)
      const before = yield* moneyAndRuns(organization.organizationId)
      const schemas = [
        { type: "object", properties: { summary: { type: "string", pattern: "^[A-Z]" } }, required: ["summary"] },
        { type: "object", properties: { label: { enum: range(30_000) } } },
        referenceChain(1_999)
      ]
      for (const schema of schemas) {
        const response = yield* postRun(organization.secret, verdict(schema), freshKey())
        assert.strictEqual(response.status, 503, response.text.slice(0, 200))
        assert.strictEqual(codeOf(response), "no_route_available")
      }
      const after = yield* moneyAndRuns(organization.organizationId)
      assert.deepStrictEqual({ ...after, runs: before.runs }, before, "no ledger entry, no charge")
    }))
})
