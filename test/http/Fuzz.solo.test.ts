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
import { Worker } from "node:worker_threads"
import fc from "fast-check"
import { ErrorClasses, statusOf } from "../../schema/Errors.js"
import { ServerAddress } from "../../src/server/Listen.js"
import { call } from "../support/Api.js"
import { type HostileRequest, hostileRequest, hostileValidRun } from "../support/HostileRequests.js"
import { grantCredit } from "../support/Invariants.js"
import { rawRequest, type RawResponse } from "../support/RawHttp.js"
import { freshKey, oneQuestion, postRun } from "../support/Runs.js"
import { seedKey, seedOrganization } from "../support/Seed.js"
import { startNode } from "../../bench/support/Processes.js"
import { ChildServers, ChildServersLive } from "../support/ChildServers.js"
import { FakeConsole } from "../support/FakeConsole.js"
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

/**
 * The prober's own thread: every 25 ms it asks both servers for `/healthz` at the same instant, each over a kept-alive
 * connection of its own, and records, for each, the answer's time, how long the server's main thread ran on a core
 * meanwhile and how long it waited for one it was ready to run on (`/proc/<pid>/task/<pid>/schedstat`, Linux; null
 * where it cannot be read). The server's counters are read right before the request is written to the socket, in the
 * same synchronous step (a plain socket, not an HTTP client that writes a tick later), so the window never holds the
 * server's work from before the request could reach it, and again as soon as the answer is whole (its headers and
 * `Content-Length` bytes, or its last chunk). On a message it posts the samples and stops. Its event loop does
 * nothing else, so a busy test thread (generating and checking the hostile requests) never delays the timing.
 */
const ProberSource = `
const { parentPort, workerData } = require("node:worker_threads")
const { readFileSync } = require("node:fs")
const net = require("node:net")
const schedstat = (pid) => {
  try {
    const [ran, waited] = readFileSync("/proc/" + pid + "/task/" + pid + "/schedstat", "utf8").split(" ")
    return { ran: Number(ran) / 1e6, waited: Number(waited) / 1e6 }
  } catch {
    return null
  }
}
/** Whether an answer's text is whole: its header block, then its Content-Length bytes or its last chunk. */
const whole = (text) => {
  const head = text.indexOf("\\r\\n\\r\\n")
  if (head < 0) return false
  const length = /\\r\\ncontent-length: *(\\d+)/i.exec(text.slice(0, head))
  return length !== null ? text.length >= head + 4 + Number(length[1]) : text.endsWith("\\r\\n0\\r\\n\\r\\n")
}
const sockets = new Map()
const connected = (url) => {
  const known = sockets.get(url)
  if (known !== undefined && !known.destroyed) return known
  const { hostname, port } = new URL(url)
  const socket = net.connect({ host: hostname, port: Number(port), noDelay: true })
  socket.ready = new Promise((resolve, reject) => {
    socket.once("connect", resolve)
    socket.once("error", reject)
  })
  // An error on an open connection closes it, and the probe under way answers to the close.
  socket.on("error", () => {})
  sockets.set(url, socket)
  return socket
}
// A probe under way when the prober stops ends as its socket is destroyed: it no longer counts. A kept-alive
// connection the server closed before anything was answered is opened again and the probe sent again (a server that
// is down fails it).
let stopped = false
const timed = async (target) => {
  const { url, pid } = target
  const socket = connected(url)
  await socket.ready
  return new Promise((resolve, reject) => {
    let text = ""
    let started = 0
    let before = null
    const done = () => {
      socket.off("data", onData)
      socket.off("close", onClose)
    }
    const onData = (chunk) => {
      text += chunk.toString("latin1")
      if (!whole(text)) return
      const ms = performance.now() - started
      const after = schedstat(pid)
      done()
      const known = before !== null && after !== null
      resolve({ ms, at: performance.timeOrigin + started, ran: known ? after.ran - before.ran : null, queued: known ? after.waited - before.waited : 0 })
    }
    const onClose = () => {
      done()
      if (stopped) resolve(null)
      else if (text === "") timed(target).then(resolve, reject)
      else reject(new Error(url + " closed the connection mid-answer"))
    }
    socket.on("data", onData)
    socket.once("close", onClose)
    before = schedstat(pid)
    started = performance.now()
    socket.write("GET " + new URL(url).pathname + " HTTP/1.1\\r\\nhost: " + new URL(url).host + "\\r\\n\\r\\n")
  })
}
const samples = []
const tick = async () => {
  if (stopped) return
  const due = performance.now() + 25
  samples.push(await Promise.all(workerData.targets.map(timed)))
  setTimeout(tick, Math.max(0, due - performance.now()))
}
parentPort.once("message", () => {
  stopped = true
  for (const socket of sockets.values()) socket.destroy()
  parentPort.postMessage(samples)
})
tick()
`

interface Probe {
  readonly ms: number
  /** The server's main thread's time on a core meanwhile (null where it cannot be read). */
  readonly ran: number | null
  readonly queued: number
}

/**
 * Polls `/healthz` every 25 ms while `during` runs, and at the same instant a bare `node:http` server in its own
 * process (bench/upstream.ts), from a worker thread of its own. What the service's own work added to an answer is
 * the time its main thread (its event loop) ran on a core while that answer was outstanding: an upper bound of the
 * loop's work ahead of the probe, which waits for a core, the network stack and the prober do not stretch (where the
 * kernel does not say, the answer's time less its wait for a core and less the bare server's, as before). Returns the
 * largest of those, the slowest answers, the service's longest wait for a core and the count.
 */
const probeHealth = <A, E, R>(during: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const address = yield* ServerAddress
    const [service] = yield* ChildServers
    const control = yield* Effect.acquireRelease(
      Effect.promise(() => startNode("bench/upstream.ts", {})),
      (child) => Effect.promise(child.stop)
    )
    const prober = yield* Effect.acquireRelease(
      Effect.sync(() =>
        new Worker(ProberSource, {
          eval: true,
          workerData: {
            targets: [
              { url: `${address.url}/healthz`, pid: service!.process.pid },
              { url: `${control.url}/healthz`, pid: control.process.pid }
            ]
          }
        })
      ),
      (worker) => Effect.promise(() => worker.terminate())
    )
    const failed = new Promise<never>((_, reject) => prober.once("error", reject))
    const result = yield* during
    const samples = yield* Effect.promise(() =>
      Promise.race([
        failed,
        new Promise<Array<readonly [Probe, Probe]>>((resolve) => {
          prober.once("message", resolve)
          prober.postMessage("stop")
        })
      ])
    )
    require("node:fs").writeFileSync("/work/main/.scratch/probes.log", samples.map(([s]) => `${(s as any).at.toFixed(1)} ${s.ms.toFixed(1)} ${s.ran?.toFixed(1)} ${s.queued.toFixed(1)} 0`).join("\n"))
    const own = (probe: Probe) => probe.ms - probe.queued
    return {
      result,
      added: Math.max(...samples.map(([service, bare]) => service.ran ?? own(service) - own(bare))),
      slowest: Math.max(...samples.map(([service]) => service.ms)),
      slowestBare: Math.max(...samples.map(([, bare]) => bare.ms)),
      queued: Math.max(...samples.map(([service]) => service.queued)),
      probes: samples.length
    }
  })

/** The service in its own process (so `/healthz` measures its event loop alone), trusting the fake console's keys. */
const FuzzServer = Layer.unwrap(
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

/**
 * Verdict schemas of every hostile shape (decisions.md, Verdict runs): wide, deep, with many patterns, huge enums and
 * reference chains, on either side of each bound (2,000 schema nodes, 256 patterns, 32 levels). Each answers by the
 * rule, `400 invalid_verdict_schema` past a bound or for a flaw, else `503 no_route_available`, never another 5xx;
 * nothing is charged (the 503s store their pending runs and nothing else); and `/healthz` keeps answering within 50 ms
 * of the service's own work while the refusals are checked.
 */
describe("POST /v1/runs verdict schemas", () => {
  const VerdictRefusals = 120
  const VerdictValid = 40

  interface VerdictShape {
    readonly name: string
    readonly schema: Record<string, unknown>
    /** The words of the refusal, or undefined when the schema is valid. */
    readonly refusal: string | undefined
  }

  const count = (n: number) => Array.from({ length: n }, (_, i) => i)

  /** A subschema that is valid, or has a flaw that is not a bound (an unresolvable reference, an invalid pattern). */
  const flaw = fc.constantFrom<readonly [Record<string, unknown>, string | undefined]>(
    [{}, undefined],
    [{ $ref: "#/$defs/missing" }, "does not resolve inside the schema"],
    [{ pattern: "([a-z]" }, "not a usable JSON Schema: pattern"]
  )

  const past = (value: number, bound: number, words: string) => (value > bound ? words : undefined)

  const wide = fc.tuple(fc.integer({ min: 1, max: 3_000 }), fc.boolean()).map(([n, booleans]): VerdictShape => ({
    name: `wide ${n}`,
    schema: { type: "object", properties: Object.fromEntries(count(n).map((i) => [`k${i}`, booleans ? true : { type: "string" }])) },
    refusal: past(1 + n, 2_000, "more than 2,000 schema nodes")
  }))

  const deep = fc.integer({ min: 1, max: 200 }).map((levels): VerdictShape => {
    let schema: Record<string, unknown> = { type: "string" }
    for (let level = 1; level < levels; level++) schema = { not: schema }
    return { name: `deep ${levels}`, schema, refusal: past(levels, 32, "nests more than 32 levels") }
  })

  const patterns = fc.tuple(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 400 })).map(([inline, named]): VerdictShape => ({
    name: `patterns ${inline} + ${named}`,
    schema: {
      anyOf: [{ type: "number" }, ...count(inline).map((i) => ({ type: "string", pattern: `^(a|b)*${i}(c|d)+$` }))],
      patternProperties: Object.fromEntries(count(named).map((i) => [`^n${i}_[a-z]+$`, true]))
    },
    refusal: past(inline + named, 256, "more than 256 patterns") ?? past(2 + inline + named, 2_000, "more than 2,000 schema nodes")
  }))

  const enumShape = (kind: string, n: number, extra: Record<string, unknown>, refusal: string | undefined): VerdictShape => ({
    name: `enum of ${n} ${kind}`,
    schema: { allOf: [extra], enum: count(n).map((i) => (kind === "numbers" ? i : kind === "strings" ? `e${i}` : { e: [i] })) },
    refusal
  })

  // As long as the run's input estimate allows (64,000 tokens): some 200 KB of items, of each kind.
  const enums = fc.tuple(
    fc.constantFrom(["numbers", 30_000] as const, ["strings", 20_000] as const, ["objects", 12_000] as const),
    fc.nat(),
    flaw
  ).map(([[kind, most], seed, [extra, refusal]]) => enumShape(kind, seed % (most + 1), extra, refusal))

  const references = fc.tuple(fc.integer({ min: 1, max: 2_500 }), fc.boolean(), flaw).map(([n, broken, [extra, refusal]]): VerdictShape => ({
    name: `reference chain of ${n}${broken ? ", broken" : ""}`,
    schema: {
      allOf: [extra],
      $ref: "#/$defs/d0",
      $defs: Object.fromEntries(count(n).map((i) => [`d${i}`, { $ref: `#/$defs/d${broken && i === n - 1 ? "none" : (i + 1) % n}` }]))
    },
    refusal: past(2 + n, 2_000, "more than 2,000 schema nodes") ?? refusal ??
      (broken ? "does not resolve inside the schema" : undefined)
  }))

  const verdictShape = fc.oneof(wide, deep, patterns, enums, references)

  const charges = (organizationId: string) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.map(
        sql<{ state: unknown }>`SELECT json_build_object(
          'ledger', (SELECT count(*) FROM ledger_entries WHERE organization_id = ${organizationId}),
          'balance', (SELECT balance_micros FROM credit_accounts WHERE organization_id = ${organizationId}),
          'transactions', (SELECT count(*) FROM credit_transactions WHERE organization_id = ${organizationId}),
          'runs', (SELECT count(*) FROM runs WHERE organization_id = ${organizationId})
        )::text AS state`,
        ([row]) => JSON.parse(String(row!.state)) as Record<string, number>
      ))

  /** Sends one shape as a verdict run; why its answer is not the rule's, or undefined when it is. */
  const sendShape = (url: string, secret: string, statuses: Map<number, number>) => async (shape: VerdictShape) => {
    const response = await Effect.runPromise(rawRequest(url, {
      method: "POST",
      path: "/v1/runs",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", "idempotency-key": freshKey() },
      body: JSON.stringify({ kind: "verdict", state: "The parcel is late.", instructions: "Summarise", schema: shape.schema })
    }))
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
    const body = response.text.startsWith("{") ? JSON.parse(response.text) : undefined
    const [status, code] = shape.refusal === undefined ? [503, "no_route_available"] : [400, "invalid_verdict_schema"]
    const ok = response.status === status && body?.error?.code === code &&
      (shape.refusal === undefined || String(body.error.message).includes(shape.refusal))
    return ok ? undefined : `${shape.name}: expected ${status} ${code}, got ${response.status} ${response.text.slice(0, 200)}`
  }

  const holds = (send: (shape: VerdictShape) => Promise<string | undefined>, failures: Array<string>) => async (shape: VerdictShape) => {
    const problem = await send(shape)
    if (problem !== undefined) failures.push(problem)
    return problem === undefined
  }

  layer(FuzzServer, { excludeTestServices: true, timeout: "300 seconds" })("fuzz", (it) => {
    // The refusals are probed: each is the check's whole work (the flawed shapes within the bounds go through every
    // step). The valid shapes are not: each 503 stores its pending run, and under the embedded database those writes
    // run on the service's own event loop, which is the database's cost, not the check's.
    it.effect("wide, deep, many-pattern, huge-enum and reference-chain schemas answer 400 or 503 by the rule, quickly", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, 10_000_000)
        const before = yield* charges(organization.organizationId)
        const address = yield* ServerAddress
        const failures: Array<string> = []
        const statuses = new Map<number, number>()
        const send = holds(sendShape(address.url, organization.secret, statuses), failures)
        const run = (shapes: fc.Arbitrary<VerdictShape>, numRuns: number) =>
          Effect.promise(() =>
            fc.assert(fc.asyncProperty(shapes, send), { numRuns, seed: 20261128, endOnFailure: true })
              .catch((error: unknown) => failures.push(String(error).slice(0, 500)))
          )
        const { added, probes, queued, slowest } = yield* probeHealth(
          run(verdictShape.filter((shape) => shape.refusal !== undefined), VerdictRefusals)
        )
        yield* run(verdictShape.filter((shape) => shape.refusal === undefined), VerdictValid)
        console.log(
          `fuzz verdict schemas: statuses ${JSON.stringify(Object.fromEntries(statuses))}; /healthz over ${probes} probes ` +
            `during the refusals: slowest ${slowest.toFixed(1)} ms, the service's longest wait for a core ` +
            `${queued.toFixed(1)} ms, at most ${added.toFixed(1)} ms of the service's own work while one was out`
        )
        assert.deepStrictEqual(failures, [])
        assert.deepStrictEqual(Object.fromEntries(statuses), { 400: VerdictRefusals, 503: VerdictValid })
        const after = yield* charges(organization.organizationId)
        assert.deepStrictEqual(after, { ...before, runs: before.runs! + VerdictValid }, "only the 503s' pending runs stored; nothing charged")
        assert.isAbove(probes, 10)
        assert.isBelow(added, 50, "/healthz answered within 50 ms of the service's own work throughout")
      }).pipe(Effect.scoped))
  })
})
