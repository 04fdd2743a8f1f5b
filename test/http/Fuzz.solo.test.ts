/**
 * Property-based fuzzing of every route over real HTTP: thousands of generated hostile requests (bad credentials,
 * malformed, too deep, too large or unstorable bodies, unknown fields, wrong types and content types, odd queries,
 * paths and methods, bad idempotency keys and request ids; test/support/HostileRequests.ts) must each be refused by
 * the contract (a 4xx in its JSON envelope, its plain text, or an empty 404/405; never a 5xx), store and charge
 * nothing (the organization's rows, balance and keys unchanged), while `/healthz` keeps answering within 50 ms (the
 * service runs in its own process; a bare server probed at the same instants takes the machine's stalls out).
 * Hostile yet valid bodies (prototype names as ids, option names and state keys) must run like any other.
 */
import { SqlClient } from "@effect/sql"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Fiber, Layer, Schedule } from "effect"
import fc from "fast-check"
import { ErrorClasses, statusOf } from "../../schema/Errors.js"
import { ServerAddress } from "../../src/http/Listen.js"
import { call } from "../support/Api.js"
import { type HostileRequest, hostileRequest, hostileValidRun } from "../support/HostileRequests.js"
import { grantCredit } from "../support/Invariants.js"
import { rawRequest, type RawResponse } from "../support/RawHttp.js"
import { freshKey, oneQuestion, postRun } from "../support/Runs.js"
import { seedKey, seedOrganization } from "../support/Seed.js"
import { startNode } from "../../bench/support/Processes.js"
import { ChildServersLive } from "../support/ChildServers.js"
import { FakeConsole } from "../support/FakeConsole.js"

const Refusals = 2_500
const ValidHostileRuns = 60

const statusByCode = new Map(ErrorClasses.map((cls) => [cls._tag, statusOf(cls)]))

const TextPrefixes: ReadonlyArray<readonly [number, string]> = [
  [400, "Failed to parse the request body as JSON"],
  [400, "Failed to deserialize query string"],
  [413, "Failed to buffer the request body"],
  [415, "Expected request with `Content-Type: application/json`"],
  [422, "Failed to deserialize the JSON body into the target type"]
]

const RequestIdPattern = /^[A-Za-z0-9._-]{1,128}$/

/** Why a response is not a refusal in the contract's words, or undefined when it is. */
export const refusalProblem = (request: HostileRequest, response: RawResponse): string | undefined => {
  if (response.status < 400 || response.status > 499) return `status ${response.status}`
  const id = response.headers["x-request-id"]
  if (typeof id !== "string") return "no x-request-id header"
  const sent = request.headers["x-request-id"]
  const echoed = sent !== undefined && RequestIdPattern.test(sent)
  if (echoed ? id !== sent : !/^req_[0-9a-f]{32}$/.test(id)) return `x-request-id ${JSON.stringify(id)} for ${JSON.stringify(sent)}`
  const type = String(response.headers["content-type"] ?? "")
  if ((response.status === 404 || response.status === 405) && response.text === "" && response.headers["content-length"] === "0") {
    return undefined
  }
  if (type.startsWith("application/json")) {
    let body: any
    try {
      body = JSON.parse(response.text)
    } catch {
      return "a JSON content type with a body that is not JSON"
    }
    const error = body?.error
    if (Object.keys(body ?? {}).join() !== "error" || Object.keys(error ?? {}).join() !== "code,message,request_id") {
      return `not the envelope: ${response.text.slice(0, 200)}`
    }
    if (statusByCode.get(error.code) !== response.status) return `code ${error.code} with status ${response.status}`
    if (error.request_id !== id) return "request_id differs from the header"
    if (typeof error.message !== "string" || error.message === "") return "an empty message"
    return undefined
  }
  if (type.startsWith("text/plain")) {
    const known = TextPrefixes.some(([status, prefix]) => status === response.status && response.text.startsWith(prefix))
    return known ? undefined : `plain text ${response.status}: ${response.text.slice(0, 120)}`
  }
  return `content type ${type} with status ${response.status}: ${response.text.slice(0, 120)}`
}

/** What a refused request must not change: the organization's rows, balance, keys and checkouts. */
const snapshot = (organizationId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ state: unknown }>`SELECT json_build_object(
        'runs', (SELECT json_agg(json_build_object('id', id, 'state', state, 'cost', cost_micros) ORDER BY id) FROM runs
          WHERE organization_id = ${organizationId}),
        'ledger', (SELECT count(*) FROM ledger_entries WHERE organization_id = ${organizationId}),
        'keys', (SELECT json_agg(json_build_object('id', id, 'state', state, 'prefix', secret_prefix) ORDER BY id)
          FROM api_keys WHERE organization_id = ${organizationId}),
        'balance', (SELECT balance_micros FROM credit_accounts WHERE organization_id = ${organizationId}),
        'transactions', (SELECT json_agg(json_build_object('id', id, 'amount', amount_micros) ORDER BY id)
          FROM credit_transactions WHERE organization_id = ${organizationId}),
        'checkouts', (SELECT count(*) FROM checkouts WHERE organization_id = ${organizationId}),
        'settings', (SELECT row_to_json(s) FROM billing_settings s WHERE organization_id = ${organizationId})
      )::text AS state`,
      ([row]) => row!.state
    ))

/**
 * Polls `/healthz` every 25 ms while `during` runs, and at the same instant a bare `node:http` server in its own
 * process (bench/upstream.ts): the machine's own stalls (other processes, the scheduler) delay both, so the
 * difference is what the service alone added. Returns the largest difference, the slowest answers and the count.
 */
const probeHealth = <A, E, R>(during: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const address = yield* ServerAddress
    const control = yield* Effect.acquireRelease(
      Effect.promise(() => startNode("bench/upstream.ts", {})),
      (child) => Effect.promise(child.stop)
    )
    const timed = async (url: string) => {
      const started = performance.now()
      await fetch(url).then((response) => response.text())
      return performance.now() - started
    }
    const samples: Array<readonly [number, number]> = []
    const prober = yield* Effect.fork(
      Effect.promise(async () => {
        samples.push(await Promise.all([timed(`${address.url}/healthz`), timed(`${control.url}/healthz`)]))
      }).pipe(Effect.repeat(Schedule.spaced("25 millis")))
    )
    const result = yield* during
    yield* Fiber.interrupt(prober)
    return {
      result,
      added: Math.max(...samples.map(([service, bare]) => service - bare)),
      slowest: Math.max(...samples.map(([service]) => service)),
      slowestBare: Math.max(...samples.map(([, bare]) => bare)),
      probes: samples.length
    }
  })

/** The service in its own process (so `/healthz` measures its event loop alone), trusting the fake console's keys. */
const FuzzServer = Layer.unwrapEffect(
  Effect.map(FakeConsole, (console) =>
    ChildServersLive({
      env: {
        CONSOLE_JWKS_URL: console.jwksUrl,
        CONSOLE_JWT_ISSUER: console.issuer,
        CONSOLE_JWT_AUDIENCE: console.audience
      }
    }))
).pipe(Layer.provideMerge(FakeConsole.layer))

layer(FuzzServer, { excludeTestServices: true, timeout: "300 seconds" })("fuzz", (it) => {
  describe("every route", () => {
    it.effect("generated hostile requests are refused in the contract's words and store or charge nothing", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, 10_000_000)
        const sacrificial = yield* seedKey(organization.organizationId, organization.ownerId, ["runs_read"])
        const run = yield* postRun(organization.secret, oneQuestion(), freshKey())
        assert.strictEqual(run.status, 200)
        const context = { secret: organization.secret, keyId: sacrificial.id, runId: run.json().run_id }
        const before = yield* snapshot(organization.organizationId)
        const address = yield* ServerAddress
        const classes = new Map<string, number>()
        const statuses = new Map<number, number>()
        const failures: Array<string> = []
        const { added, probes, slowest, slowestBare } = yield* probeHealth(Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(hostileRequest(context), async (request) => {
              const response = await Effect.runPromise(rawRequest(address.url, {
                method: request.method,
                path: request.path,
                headers: request.headers,
                ...(request.body === undefined ? {} : { body: request.body })
              }))
              for (const name of request.classes) classes.set(name, (classes.get(name) ?? 0) + 1)
              statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
              const problem = refusalProblem(request, response)
              if (problem !== undefined) failures.push(`${request.method} ${request.path} [${request.classes}]: ${problem}`)
              return problem === undefined
            }),
            { numRuns: Refusals, seed: 20261124, endOnFailure: true }
          ).catch((error: unknown) => failures.push(String(error)))
        ))
        const fiveHundreds = [...statuses].filter(([status]) => status >= 500).reduce((sum, [, n]) => sum + n, 0)
        console.log(
          `fuzz: ${[...statuses.values()].reduce((a, b) => a + b, 0)} requests, ${classes.size} input classes, ` +
            `${fiveHundreds} answers 5xx; statuses ${JSON.stringify(Object.fromEntries(statuses))}; ` +
            `/healthz over ${probes} probes: slowest ${slowest.toFixed(1)} ms (a bare node:http server at the same ` +
            `instants: ${slowestBare.toFixed(1)} ms), at most ${added.toFixed(1)} ms more than the bare server\n` +
            [...classes].sort().map(([name, n]) => `  ${name}: ${n}`).join("\n")
        )
        assert.deepStrictEqual(failures, [])
        assert.strictEqual(fiveHundreds, 0)
        assert.isAtLeast(classes.size, 25)
        assert.strictEqual(yield* snapshot(organization.organizationId), before, "nothing stored or charged")
        assert.isAbove(probes, 10)
        assert.isBelow(added, 50, "/healthz answered within 50 ms (beyond the machine's own stalls) throughout")
      }).pipe(Effect.scoped))

    it.effect("hostile yet valid bodies run: prototype names as question ids, option names and state keys", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* seedOrganization()
        const samples = fc.sample(hostileValidRun, { numRuns: ValidHostileRuns, seed: 20261124 })
        for (const sample of samples) {
          const response = yield* postRun(secret, undefined, freshKey(), { rawBody: sample.body })
          assert.strictEqual(response.status, 200, `${sample.body}: ${response.text}`)
          const answers = response.json().decision.answers
          assert.sameMembers(Object.keys(answers), [...sample.questionIds], sample.body)
          const stored = yield* call("GET", `/v1/runs/${response.json().run_id}`, { secret })
          assert.deepStrictEqual(stored.json().decision.answers, answers)
        }
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM runs WHERE organization_id = ${organizationId}`
        assert.strictEqual(row!.n, samples.length)
      }))
  })
})
