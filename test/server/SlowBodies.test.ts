/**
 * Slow clients (decisions.md, Precise rules, "Slow clients"; src/server/BodyDeadline.ts, src/server/Overload.ts): a
 * body must arrive within REQUEST_BODY_TIMEOUT_MS of its headers, else a plain-text 408 and the connection closes; the
 * credential and the scope are checked from the headers before the body is read; the overload guard counts a run or
 * selection only once its body has been read. So more slow uploads than the guard's places, with a key lacking the
 * scope or holding it, on the direct route and through the API, leave another organization's runs served; nothing
 * refused is stored or charged.
 */
import { connect, type Socket } from "node:net"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { DirectRoutes } from "../../src/server/DirectRoutes.js"
import { ServerAddress } from "../../src/server/Listen.js"
import { ShedMessage } from "../../src/http/ShedOnceRead.js"
import { call, codeOf } from "../support/Api.js"
import { assertMoneyInvariants, grantCredit } from "../support/Invariants.js"
import { freshKey, oneQuestion, postRun } from "../support/Runs.js"
import { seedKey, seedOrganization } from "../support/Seed.js"
import { TestServerWithUpstreamLive } from "../support/TestServer.js"

/** The guard's places (RUNS_MAX_IN_FLIGHT); the tests open more slow uploads than this. */
const Places = 4
const BodyTimeoutMs = 1_500

/** A raw connection that sent a request's headers and one byte of its body, with what came back on it. */
interface SlowUpload {
  readonly socket: Socket
  readonly openedAt: number
  /** Everything the server sent, and when the connection closed (performance.now()). */
  readonly received: { text: string; answeredAt: number | undefined; closedAt: number | undefined }
}

/** Opens a connection sending `POST path` headers (a body of 100 bytes declared) and one byte of the body. */
const slowUpload = (url: string, path: string, secret: string) =>
  Effect.callback<SlowUpload>((resume) => {
    const { hostname, port } = new URL(url)
    const socket = connect(Number(port), hostname)
    const received = { text: "", answeredAt: undefined as number | undefined, closedAt: undefined as number | undefined }
    socket.on("data", (chunk) => {
      received.answeredAt ??= performance.now()
      received.text += chunk.toString("utf8")
    })
    socket.on("close", () => {
      received.closedAt = performance.now()
    })
    socket.on("error", () => {})
    socket.once("connect", () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nhost: ${hostname}\r\nauthorization: Bearer ${secret}\r\n` +
          `content-type: application/json\r\nidempotency-key: ${freshKey()}\r\ncontent-length: 100\r\n\r\n{`
      )
      resume(Effect.succeed({ socket, openedAt: performance.now(), received }))
    })
  })

const untilClosed = (upload: SlowUpload, withinMs: number) =>
  Effect.gen(function*() {
    const until = performance.now() + withinMs
    while (upload.received.closedAt === undefined && performance.now() < until) yield* Effect.sleep(20)
    return upload.received
  })

/** What an organization has stored and been charged. */
const stored = (organizationId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ runs: number; calls: number; balance: number; transactions: number }>`SELECT
      (SELECT count(*)::int FROM runs WHERE organization_id = ${organizationId}) AS runs,
      (SELECT count(*)::int FROM ledger_entries WHERE organization_id = ${organizationId}) AS calls,
      (SELECT balance_micros FROM credit_accounts WHERE organization_id = ${organizationId}) AS balance,
      (SELECT count(*)::int FROM credit_transactions WHERE organization_id = ${organizationId}) AS transactions`
    return row!
  })

const statusLine = (text: string) => text.split("\r\n", 1)[0]

/** The scenario, on either server below. */
const slowUploadsLeaveOthersServed = Effect.gen(function*() {
  const { url } = yield* ServerAddress
  const slow = yield* seedOrganization({ billing: true })
  yield* grantCredit(slow.organizationId, 100_000)
  const reader = yield* seedKey(slow.organizationId, slow.ownerId, ["billing_read"])
  const other = yield* seedOrganization({ billing: true })
  yield* grantCredit(other.organizationId, 100_000)
  const before = yield* stored(slow.organizationId)

  const uploads: Array<{ readonly kind: "reader" | "runs"; readonly upload: SlowUpload }> = []
  for (let i = 0; i < 3 * Places; i++) {
    uploads.push({ kind: "reader", upload: yield* slowUpload(url, "/v1/runs", reader.secret) })
    uploads.push({ kind: "runs", upload: yield* slowUpload(url, "/v1/runs", slow.secret) })
    uploads.push({ kind: "runs", upload: yield* slowUpload(url, "/v1/router/select", slow.secret) })
  }
  yield* Effect.sleep(100)
  for (let i = 0; i < 3; i++) {
    const served = yield* postRun(other.secret, oneQuestion())
    assert.strictEqual(served.status, 200, `another organization's run is served meanwhile: ${served.text.slice(0, 300)}`)
  }
  const early = uploads.filter(({ kind }) => kind === "reader")
  for (const { upload } of early) {
    const answer = upload.received.text
    assert.strictEqual(statusLine(answer), "HTTP/1.1 403 Forbidden", "a key lacking the scope is refused from the headers")
    assert.include(answer, `"code":"scope_denied"`)
    assert.isBelow(upload.received.answeredAt! - upload.openedAt, BodyTimeoutMs, "without waiting for the body")
  }
  for (const { upload } of uploads.filter(({ kind }) => kind === "runs")) {
    const received = yield* untilClosed(upload, BodyTimeoutMs * 4)
    assert.strictEqual(statusLine(received.text), "HTTP/1.1 408 Request Timeout")
    assert.match(received.text, /content-type: text\/plain; charset=utf-8/i)
    assert.match(received.text, /connection: close/i)
    assert.include(received.text, `within ${BodyTimeoutMs} ms of its headers`)
    assert.isDefined(received.closedAt, "the connection closes")
    assert.isAtLeast(received.closedAt! - upload.openedAt, BodyTimeoutMs - 50, "not before the deadline")
  }
  for (const { upload } of uploads) upload.socket.destroy()
  assert.deepStrictEqual(yield* stored(slow.organizationId), before, "nothing refused is stored or charged")
  yield* assertMoneyInvariants
})

const settings = { runsMaxInFlight: Places, requestBodyTimeoutMs: BodyTimeoutMs }

layer(TestServerWithUpstreamLive(settings), { excludeTestServices: true, timeout: "60 seconds" })("slow uploads, direct route", (it) => {
  describe("POST /v1/runs served directly", () => {
    it.effect("more slow uploads than the guard's places leave other organizations served; 403 at once, 408 late", () =>
      slowUploadsLeaveOthersServed)
  })
})

layer(
  TestServerWithUpstreamLive(settings, { directRoutes: Layer.succeed(DirectRoutes, []) }),
  { excludeTestServices: true, timeout: "60 seconds" }
)("slow uploads, through the API", (it) => {
  describe("POST /v1/runs through the HttpApi (as with OTLP export on)", () => {
    it.effect("more slow uploads than the guard's places leave other organizations served; 403 at once, 408 late", () =>
      slowUploadsLeaveOthersServed)

  })
})

/** Keeps the event loop busy, as a saturated process would (as in Overload.test.ts). */
const blockEventLoop = (ms: number) =>
  Effect.sync(() => {
    const until = performance.now() + ms
    while (performance.now() < until) {
      // busy
    }
  })

layer(
  TestServerWithUpstreamLive({ overloadMaxLagMs: 50 }, { directRoutes: Layer.succeed(DirectRoutes, []) }),
  { excludeTestServices: true, timeout: "60 seconds" }
)("shedding once the body is read, through the API", (it) => {
  it.effect("a run or selection shed after its body was read is 503 no_route_available with Retry-After; nothing stored", () =>
    Effect.gen(function*() {
      const organization = yield* seedOrganization()
      // The key is known to the process, so the request reaches the guard within the lag's decay.
      assert.strictEqual((yield* postRun(organization.secret, oneQuestion())).status, 200)
      const before = yield* stored(organization.organizationId)
      for (const path of ["/v1/runs", "/v1/router/select"]) {
        yield* blockEventLoop(600)
        yield* Effect.sleep(1)
        const body = path === "/v1/runs" ? oneQuestion() : { prompt: "Which model should answer this?" }
        const shed = yield* call("POST", path, { secret: organization.secret, body, headers: { "idempotency-key": freshKey() } })
        assert.strictEqual(shed.status, 503, `${path}: ${shed.text}`)
        assert.strictEqual(codeOf(shed), "no_route_available", path)
        assert.strictEqual(shed.headers["retry-after"], "1", path)
        assert.strictEqual(shed.json().error.message, ShedMessage, path)
      }
      assert.deepStrictEqual(yield* stored(organization.organizationId), before, "a shed request stores nothing")
    }))
})
