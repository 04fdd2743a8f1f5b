/**
 * The run state table (spec, "States and transitions"; decisions.md, Precise rules): stored `pending` with its holds
 * before the model is called; `completed` and charged when the model answers; `failed` and charged for the calls
 * that occurred when it fails after one; still `pending` (holds released, nothing charged, replays 202) when it
 * fails before any call occurred. Each upstream failure maps to its code.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Fiber, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { call, codeOf } from "../support/Api.js"
import { FakeUpstream, type UpstreamReply } from "../support/FakeUpstream.js"
import { assertMoneyInvariants, grantCredit } from "../support/Invariants.js"
import { freshKey, oneQuestion, postRun } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerWithUpstreamLive } from "../support/TestServer.js"

const stored = (organizationId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ state: string; held: boolean; cost_micros: number; error_code: string | null; calls: number; failed_calls: number }>`
      SELECT state, held, cost_micros, error_code,
        (SELECT count(*)::int FROM ledger_entries l WHERE l.run_id = r.id) AS calls,
        (SELECT count(*)::int FROM ledger_entries l WHERE l.run_id = r.id AND l.status = 'failed') AS failed_calls
      FROM runs r WHERE organization_id = ${organizationId}`
  })

layer(TestServerWithUpstreamLive(), { excludeTestServices: true, timeout: "120 seconds" })("run states", (it) => {
  it.effect("(none) -> pending: stored with its holds before the model is called, then completed and charged", () =>
    Effect.gen(function*() {
      const upstream = yield* FakeUpstream
      const organization = yield* seedOrganization({ billing: true })
      yield* grantCredit(organization.organizationId, 50_000)
      // The upstream holds the call: once it has arrived the run was admitted and is waiting on the model, however
      // slow the machine (no wall-clock margin).
      yield* upstream.hold
      const calledBefore = (yield* upstream.requests).length
      const fiber = yield* Effect.forkChild(postRun(organization.secret, oneQuestion()))
      yield* upstream.requests.pipe(
        Effect.filterOrFail((requests) => requests.length > calledBefore),
        Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo({ duration: "30 seconds" })))
      )
      const sql = yield* SqlClient.SqlClient
      const [during] = yield* sql<{ state: string; held: boolean; reserved: number; quota: number }>`
        SELECT r.state, r.held,
          (SELECT sum(hold_micros)::int FROM runs x WHERE x.organization_id = r.organization_id AND x.held AND x.hold_credit) AS reserved,
          (SELECT sum(hold_micros)::int FROM runs x WHERE x.organization_id = r.organization_id AND x.held AND x.period = r.period) AS quota
        FROM runs r WHERE r.organization_id = ${organization.organizationId}`
      assert.deepStrictEqual(during, { state: "pending", held: true, reserved: 20_000, quota: 20_000 })
      const billing = yield* call("GET", "/v1/billing", { secret: organization.secret })
      assert.strictEqual(billing.json().reserved_micros, 20_000, "GET /v1/billing shows the hold")
      const quota = yield* call("GET", "/v1/quota", { secret: organization.secret })
      assert.strictEqual(quota.json().spend_reserved_micros, 20_000, "GET /v1/quota shows the hold")
      yield* upstream.release
      const response = yield* Fiber.join(fiber)
      assert.strictEqual(response.status, 200)
      const [after] = yield* stored(organization.organizationId)
      assert.strictEqual(after!.state, "completed")
      assert.isFalse(after!.held)
      assert.strictEqual(after!.cost_micros, response.json().cost_micros)
      yield* assertMoneyInvariants
    }))

  const failsAfterACall: Array<[string, ReadonlyArray<UpstreamReply>, string]> = [
    ["no log-probabilities", [{ kind: "noLogprobs" }], "decision_unavailable"],
    ["none of the letters", [{ kind: "logprobs", top: { Hello: 0.9, World: 0.1 } }], "decision_unavailable"]
  ]
  for (const [name, replies, code] of failsAfterACall) {
    it.effect(`pending -> failed after a call (${name}): 503 ${code}, charged, replays 200 failed`, () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        const organization = yield* seedOrganization()
        yield* upstream.script(...replies)
        const key = freshKey()
        const response = yield* postRun(organization.secret, oneQuestion(), key)
        assert.strictEqual(response.status, 503)
        assert.strictEqual(codeOf(response), code)
        const [run] = yield* stored(organization.organizationId)
        assert.strictEqual(run!.state, "failed")
        assert.strictEqual(run!.error_code, code)
        assert.strictEqual(run!.calls, 1)
        assert.isAbove(run!.cost_micros, 0)
        const replay = yield* postRun(organization.secret, oneQuestion(), key)
        assert.strictEqual(replay.status, 200)
        assert.strictEqual(replay.json().state, "failed")
        yield* assertMoneyInvariants
      }))
  }

  const failsBeforeACall: Array<[string, ReadonlyArray<UpstreamReply>, number, string]> = [
    ["429 after retries", [{ kind: "status", status: 429 }, { kind: "status", status: 429 }, { kind: "status", status: 429 }], 503, "provider_rate_limited"],
    ["5xx after retries", [{ kind: "status", status: 502 }, { kind: "status", status: 500 }, { kind: "status", status: 503 }], 503, "provider_unavailable"],
    ["connection dropped", [{ kind: "drop" }, { kind: "drop" }, { kind: "drop" }], 503, "provider_unavailable"],
    ["malformed JSON", [{ kind: "malformed" }, { kind: "malformed" }, { kind: "malformed" }], 503, "provider_bad_response"]
  ]
  for (const [name, replies, status, code] of failsBeforeACall) {
    it.effect(`pending stays pending when no call occurred (${name}): ${status} ${code}, holds released, nothing charged, replays 202`, () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, 20_000)
        yield* upstream.script(...replies)
        const key = freshKey()
        const response = yield* postRun(organization.secret, oneQuestion(), key)
        assert.strictEqual(response.status, status)
        assert.strictEqual(codeOf(response), code)
        const [run] = yield* stored(organization.organizationId)
        assert.deepStrictEqual(run, { state: "pending", held: false, cost_micros: 0, error_code: null, calls: 3, failed_calls: 3 })
        const replay = yield* postRun(organization.secret, oneQuestion(), key)
        assert.strictEqual(replay.status, 202)
        const again = yield* postRun(organization.secret, oneQuestion())
        assert.strictEqual(again.status, 200, "the released hold is available again")
        yield* assertMoneyInvariants
      }))
  }

  it.effect("a retried call is a new ledger entry with retry_ordinal + 1", () =>
    Effect.gen(function*() {
      const upstream = yield* FakeUpstream
      const organization = yield* seedOrganization()
      yield* upstream.script({ kind: "status", status: 429 }, { kind: "logprobs", top: { A: 0.8, B: 0.2 }, id: "chatcmpl-retried" })
      const response = yield* postRun(organization.secret, oneQuestion())
      assert.strictEqual(response.status, 200)
      const sql = yield* SqlClient.SqlClient
      const ledger = yield* sql<{ retry_ordinal: number; status: string; cost_micros: number; provider_request_id: string | null }>`
        SELECT retry_ordinal, status, cost_micros, provider_request_id FROM ledger_entries
        WHERE organization_id = ${organization.organizationId} ORDER BY retry_ordinal`
      assert.strictEqual(ledger.length, 2)
      assert.deepStrictEqual(ledger.map((entry) => [entry.retry_ordinal, entry.status]), [[0, "failed"], [1, "succeeded"]])
      assert.strictEqual(ledger[0]!.cost_micros, 0)
      assert.strictEqual(ledger[1]!.provider_request_id, "chatcmpl-retried")
      yield* assertMoneyInvariants
    }))

  it.effect("504 deadline_exceeded when the upstream hangs past deadline_ms; nothing charged", () =>
    Effect.gen(function*() {
      const upstream = yield* FakeUpstream
      const organization = yield* seedOrganization()
      yield* upstream.script({ kind: "hang", ms: 5_000 })
      const started = Date.now()
      const response = yield* postRun(organization.secret, oneQuestion({ deadline_ms: 300 }), freshKey(), {
        headers: { "x-request-id": "deadline-run-1" }
      })
      const elapsed = Date.now() - started
      assert.strictEqual(response.status, 504)
      assert.strictEqual(codeOf(response), "deadline_exceeded")
      assert.isBelow(elapsed, 2_000, "answered near its deadline, not when the upstream gave up")
      // The handler's failure: with the run's Server-Timing and the caller's request id.
      assert.match(String(response.headers["server-timing"]), /^admit;dur=[0-9.]+, upstream;dur=[0-9.]+, gateway;dur=[0-9.]+, total;dur=[0-9.]+/)
      assert.strictEqual(response.headers["x-request-id"], "deadline-run-1")
      assert.strictEqual(response.json().error.request_id, "deadline-run-1")
      yield* Effect.sleep("200 millis")
      const [run] = yield* stored(organization.organizationId)
      assert.strictEqual(run!.state, "pending")
      assert.isFalse(run!.held)
      yield* upstream.reset
      yield* assertMoneyInvariants
    }))

  it.effect("budget_exhausted: a read whose worst case would pass 20,000 micro-USD is not made; the run fails", () =>
    Effect.gen(function*() {
      const organization = yield* seedOrganization()
      const questions = Object.fromEntries(
        ["a", "b", "c", "d"].map((id) => [id, { type: "noul", instructions: `Is ${id} true?` }])
      )
      const response = yield* postRun(organization.secret, {
        kind: "decision",
        state: "x".repeat(600_000),
        questions,
        deadline_ms: 60_000
      })
      assert.strictEqual(response.status, 503)
      assert.strictEqual(codeOf(response), "budget_exhausted")
      const [run] = yield* stored(organization.organizationId)
      assert.strictEqual(run!.state, "failed")
      assert.strictEqual(run!.calls, 3)
      assert.isAtMost(run!.cost_micros, 20_000)
      yield* assertMoneyInvariants
    }))

  it.effect("verdict runs pass validation, then 503 no_route_available; stored pending, replays 202", () =>
    Effect.gen(function*() {
      const organization = yield* seedOrganization()
      const verdict = {
        kind: "verdict",
        messages: [{ role: "user", content: "Summarise: the parcel is late." }],
        instructions: "Return a summary",
        schema: { type: "object", properties: { summary: { type: "string" } }, required: ["summary"] }
      }
      const key = freshKey()
      const response = yield* postRun(organization.secret, verdict, key)
      assert.strictEqual(response.status, 503)
      assert.strictEqual(codeOf(response), "no_route_available")
      const replay = yield* postRun(organization.secret, verdict, key)
      assert.strictEqual(replay.status, 202)
      assert.strictEqual(replay.json().kind, "verdict")
      yield* assertMoneyInvariants
    }))
})
