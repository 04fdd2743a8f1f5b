/**
 * Property-based fuzzing of every route over real HTTP: thousands of generated hostile requests (bad credentials,
 * malformed, too deep, too large or unstorable bodies, unknown fields, wrong types and content types, odd queries,
 * paths and methods, bad idempotency keys and request ids; test/support/HostileRequests.ts) must each be refused by
 * the contract (a 4xx in its JSON envelope, its plain text, or an empty 404/405; never a 5xx), store and charge
 * nothing (the organization's rows, balance and keys unchanged), while `/healthz` keeps answering within 50 ms of
 * its own work: the service (in its own process) spends less than 50 ms of its main thread's CPU time while any one
 * `/healthz` is outstanding, a measure of its event loop's work that a machine busy elsewhere does not stretch.
 * Hostile yet valid bodies (prototype names as ids, option names and state keys) must run like any other.
 */
import * as SqlClient from "effect/sql/SqlClient"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { connect } from "node:net"
import fc from "fast-check"
import { ErrorClasses, statusOf } from "../../schema/Errors.js"
import { ServerAddress } from "../../src/server/Listen.js"
import { call } from "../support/Api.js"
import { type HostileRequest, hostileRequest, hostileValidRun } from "../support/HostileRequests.js"
import { grantCredit } from "../support/Invariants.js"
import { rawRequest, type RawResponse } from "../support/RawHttp.js"
import { freshKey, oneQuestion, postRun } from "../support/Runs.js"
import { seedKey, seedOrganization } from "../support/Seed.js"
import { ProbedServiceLive, probeHealth } from "../support/ProbedService.js"
import { TestServerWithUpstreamLive } from "../support/TestServer.js"

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

layer(ProbedServiceLive, { excludeTestServices: true, timeout: "300 seconds" })("fuzz", (it) => {
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
        const { added, probes, queued, slowest, slowestBare } = yield* probeHealth(Effect.promise(() =>
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
            `instants: ${slowestBare.toFixed(1)} ms); after each one's wait for a core (the service's longest ` +
            `${queued.toFixed(1)} ms), at most ${added.toFixed(1)} ms of the service's own work while one was out\n` +
            [...classes].sort().map(([name, n]) => `  ${name}: ${n}`).join("\n")
        )
        assert.deepStrictEqual(failures, [])
        assert.strictEqual(fiveHundreds, 0)
        assert.isAtLeast(classes.size, 25)
        assert.strictEqual(yield* snapshot(organization.organizationId), before, "nothing stored or charged")
        assert.isAbove(probes, 10)
        assert.isBelow(added, 50, "/healthz answered within 50 ms of the service's own work throughout")
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

  // Slow and aborted bodies (decisions.md, Precise rules, "Slow clients"): self-contained, on a server of its own with
  // a short REQUEST_BODY_TIMEOUT_MS and a small guard (RUNS_MAX_IN_FLIGHT), in this process.
  describe("slow and aborted bodies", () => {
    const BodyTimeoutMs = 1_000

    /** How a generated upload behaves once its headers are sent. */
    type Pace =
      | { readonly _tag: "stall"; readonly sent: number }
      | { readonly _tag: "abort"; readonly sent: number; readonly afterMs: number; readonly reset: boolean }
      | { readonly _tag: "trickle"; readonly chunks: number }

    interface SlowRequest {
      readonly method: string
      readonly path: string
      readonly credential: "runs" | "reader" | "none"
      readonly chunked: boolean
      readonly pace: Pace
    }

    const SlowRoutes = [
      ["POST", "/v1/runs"],
      ["POST", "/v1/router/select"],
      ["POST", "/v1/keys"],
      ["POST", "/v1/billing/checkout"],
      ["PATCH", "/v1/keys/key_0123456789abcdef0123456789abcdef"],
      ["POST", "/billing/stripe/webhook"]
    ] as const

    const slowRequest: fc.Arbitrary<SlowRequest> = fc.record({
      route: fc.constantFrom(...SlowRoutes.map(([method, path]) => ({ method, path }))),
      credential: fc.constantFrom("runs" as const, "reader" as const, "none" as const),
      chunked: fc.boolean(),
      pace: fc.oneof(
        fc.record({ _tag: fc.constant("stall" as const), sent: fc.integer({ min: 0, max: 40 }) }),
        fc.record({
          _tag: fc.constant("abort" as const),
          sent: fc.integer({ min: 0, max: 40 }),
          afterMs: fc.integer({ min: 0, max: 100 }),
          reset: fc.boolean()
        }),
        fc.record({ _tag: fc.constant("trickle" as const), chunks: fc.integer({ min: 2, max: 5 }) })
      )
    }).map(({ chunked, credential, pace, route }) => ({ ...route, credential, chunked, pace }))

    /** What came back on a raw connection: the bytes, when the first arrived and when it closed (ms after sending). */
    interface Received {
      readonly text: string
      readonly firstMs: number | undefined
      readonly closedMs: number | undefined
    }

    /** Sends the request's headers, then its body at its pace, and reads whatever comes back until close or `waitMs`. */
    const sendSlowly = (url: string, request: SlowRequest, secret: string | undefined, body: string, waitMs: number) =>
      new Promise<Received>((resolve) => {
        const { hostname, port } = new URL(url)
        const socket = connect(Number(port), hostname)
        const started = performance.now()
        let text = ""
        let firstMs: number | undefined
        let closedMs: number | undefined
        const finish = () => {
          clearTimeout(timer)
          resolve({ text, firstMs, closedMs })
        }
        const timer = setTimeout(() => {
          socket.destroy()
          finish()
        }, waitMs)
        socket.on("data", (chunk: Buffer) => {
          firstMs ??= performance.now() - started
          text += chunk.toString("latin1")
        })
        socket.on("error", () => {})
        socket.on("close", () => {
          closedMs = performance.now() - started
          finish()
        })
        const bytes = Buffer.from(body)
        const frame = (part: Buffer) => request.chunked ? Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from("\r\n")]) : part
        socket.once("connect", () => {
          socket.write(
            `${request.method} ${request.path} HTTP/1.1\r\nhost: ${hostname}\r\n` +
              (secret === undefined ? "" : `authorization: Bearer ${secret}\r\n`) +
              `content-type: application/json\r\nidempotency-key: ${freshKey()}\r\nstripe-signature: t=1,v1=00\r\n` +
              (request.chunked ? "transfer-encoding: chunked\r\n" : `content-length: ${bytes.length}\r\n`) + "\r\n"
          )
          const pace = request.pace
          if (pace._tag !== "trickle") {
            const sent = bytes.subarray(0, Math.min(pace.sent, bytes.length - 1))
            if (sent.length > 0) socket.write(frame(sent))
            if (pace._tag === "abort") {
              setTimeout(() => (pace.reset ? socket.resetAndDestroy() : socket.destroy()), pace.afterMs)
            }
            return
          }
          // The whole body, in chunks spread over a quarter of the deadline (the rest is slack for a busy machine).
          const size = Math.ceil(bytes.length / pace.chunks)
          for (let i = 0; i < pace.chunks; i++) {
            setTimeout(() => {
              if (socket.destroyed) return
              socket.write(frame(bytes.subarray(i * size, (i + 1) * size)))
              if (i === pace.chunks - 1 && request.chunked) socket.write("0\r\n\r\n")
            }, (i * BodyTimeoutMs) / (4 * pace.chunks))
          }
        })
      })

    const statusOfText = (text: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)

    /** Why an answer to a slow or aborted request breaks the rules, or undefined. */
    const slowProblem = (request: SlowRequest, received: Received): string | undefined => {
      const status = statusOfText(received.text)
      if (status >= 500) return `status ${status}`
      if (request.pace._tag === "abort") return undefined
      if (request.pace._tag === "trickle") {
        return status === 408 ? "a body arriving within the deadline got 408" : status === 0 ? "no answer" : undefined
      }
      if (status === 408) {
        if (!/content-type: text\/plain/i.test(received.text)) return "a 408 that is not plain text"
        if (received.firstMs! < BodyTimeoutMs - 20) return `a 408 after ${received.firstMs} ms, before the deadline`
        if (received.closedMs === undefined) return "the connection stays open after the 408"
        return undefined
      }
      // Anything else is a refusal from the headers: it does not wait for the body.
      if (status !== 401 && status !== 403 && status !== 404) return `status ${status} for a stalled body`
      if (received.firstMs === undefined || received.firstMs > BodyTimeoutMs) return "a refusal from the headers waited for the body"
      return undefined
    }

    it.effect("are answered 408 after the deadline or refused from their headers, never 5xx; nothing stored; the guard's places stay free", () =>
      Effect.gen(function*() {
        const { url } = yield* ServerAddress
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, 10_000_000)
        const reader = yield* seedKey(organization.organizationId, organization.ownerId, ["billing_read"])
        const other = yield* seedOrganization()
        // Bodies trickled within the deadline are served: they go to an organization of their own.
        const trickler = yield* seedOrganization({ billing: true })
        yield* grantCredit(trickler.organizationId, 10_000_000)
        const before = yield* snapshot(organization.organizationId)
        const failures: Array<string> = []
        const bodies: Record<string, string> = {
          "/v1/runs": JSON.stringify({ ...oneQuestion(), state: "x".repeat(60) }),
          "/v1/router/select": JSON.stringify({ prompt: "x".repeat(60) }),
          "/v1/billing/checkout": JSON.stringify({ amount_micros: 5_000_000 })
        }
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(fc.array(slowRequest, { minLength: 6, maxLength: 12 }), async (requests) => {
              // A batch at once: more stalled uploads than the guard's places, with another organization's run beside.
              const secretOf = (request: SlowRequest) =>
                request.credential === "runs"
                  ? (request.pace._tag === "trickle" ? trickler.secret : organization.secret)
                  : request.credential === "reader"
                  ? reader.secret
                  : undefined
              const received = await Promise.all(requests.map((request) =>
                sendSlowly(url, request, secretOf(request), bodies[request.path] ?? `{"limits":{"tokens":1},"name":"slow-${"x".repeat(40)}"}`, BodyTimeoutMs * 4)
              ))
              requests.forEach((request, i) => {
                const problem = slowProblem(request, received[i]!)
                if (problem !== undefined) failures.push(`${JSON.stringify(request)}: ${problem}: ${received[i]!.text.slice(0, 200)}`)
              })
              const served = await Effect.runPromise(Effect.provideService(postRun(other.secret, oneQuestion()), ServerAddress, { url, host: "", port: 0 }))
              if (served.status !== 200) failures.push(`another organization's run answered ${served.status}`)
              return failures.length === 0
            }),
            { numRuns: 8, seed: 20261128, endOnFailure: true }
          ).catch((error: unknown) => failures.push(String(error)))
        )
        assert.deepStrictEqual(failures, [])
        assert.strictEqual(yield* snapshot(organization.organizationId), before, "nothing stored or charged")
      }).pipe(
        Effect.provide(TestServerWithUpstreamLive({ requestBodyTimeoutMs: BodyTimeoutMs, runsMaxInFlight: 4 })),
        // A memo map of its own: Effect 4 would otherwise share the fuzz server's built layers (its database among
        // them) with this server's, seeding one database and serving from another.
        (effect) => Effect.flatMap(Layer.makeMemoMap, (memoMap) => Effect.provideService(effect, Layer.CurrentMemoMap, memoMap))
      ))
  })
})
