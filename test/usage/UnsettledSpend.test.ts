/**
 * Calls already answered for runs not yet settled (decisions.md, Precise rules): while a run's later stage has its
 * call open, the earlier stage's answered call is in the ledger and in the run's usage, and the rollup counts its
 * cost as `unsettled_micros`, apart from the settled spend (the later call starts only once it is stored); a call
 * answered while the same read goes on (a thought before its letter) is there within moments. Settlement then keeps
 * each call once and bills the run exactly its ledger. A run whose process died after a call was answered is
 * settled by the sweeper as `failed`, billed for that call. The upstream holds the later call until the test has
 * read; nothing waits on a wall-clock margin.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Fiber, Result, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { CallRecorder } from "../../src/ledger/CallRecorder.js"
import { RunLedger } from "../../src/ledger/RunLedger.js"
import { SPEND_CEILING_MICROS } from "../../src/runs/RunLimits.js"
import { compileRunSpec } from "../../src/runs/RunSpec.js"
import { FakeUpstream } from "../support/FakeUpstream.js"
import { assertMoneyInvariants, grantCredit } from "../support/Invariants.js"
import { freshKey, oneQuestion, postRun } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { handToDeadHolder, sweptUntilReleased, untilSteady } from "../support/DeadHolder.js"
import { getJson, hyphenated } from "../support/Usage.js"
import { TestServerWithUpstreamLive } from "../support/TestServer.js"

const twoStages = {
  kind: "decision",
  state: "I was charged twice for order 84-1192.",
  questions: {
    refund: { type: "noul", instructions: "Does the customer ask for a refund?" },
    urgent: { type: "noul", instructions: "Is it urgent?", depends_on: ["refund"] }
  }
}

const usage = { prompt_tokens: 1_000, completion_tokens: 1 }

/** Waits until the organization's ledger lists `count` entries (the test's timeout bounds the wait). */
const untilLedgerHas = (secret: string, count: number) =>
  Effect.repeat(getJson("/v1/usage/ledger", secret), {
    schedule: Schedule.spaced("20 millis"),
    until: (ledger) => ledger.entries.length >= count
  })

/** Waits until the upstream has received `count` requests (the test's timeout bounds the wait). */
const untilUpstreamReceived = (count: number) =>
  Effect.gen(function*() {
    const upstream = yield* FakeUpstream
    yield* Effect.repeat(upstream.requests, { schedule: Schedule.spaced("10 millis"), until: (received) => received.length >= count })
  })

layer(TestServerWithUpstreamLive({ ledgerLeaseTtlSeconds: 2 }), { excludeTestServices: true, timeout: "120 seconds" })("unsettled spend", (it) => {
  describe("a run still reading", () => {
    it.effect("while its second stage's call is open, the first stage's call is in the ledger, its usage and unsettled_micros; settlement keeps it once", () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        const { organizationId, secret } = yield* seedOrganization({ billing: true })
        yield* grantCredit(organizationId, 100_000)
        yield* upstream.script(
          { kind: "logprobs", top: { A: 0.9, B: 0.1 }, usage, id: "chatcmpl-first" },
          { kind: "held", then: { kind: "logprobs", top: { A: 0.2, B: 0.8 }, usage, id: "chatcmpl-second" } }
        )
        const running = yield* Effect.forkChild(postRun(secret, twoStages, freshKey()))
        // The second stage's call is open (and stays open until released): read at once, without waiting.
        yield* untilUpstreamReceived(2)

        const sql = yield* SqlClient.SqlClient
        const [pending] = yield* sql<{ id: string }>`SELECT id::text FROM runs WHERE organization_id = ${organizationId}`
        const runId = hyphenated(`run_${pending!.id.replace(/-/g, "")}`)
        const rollup = yield* getJson("/v1/usage", secret)
        assert.deepStrictEqual(rollup.runs, { total: 1, completed: 0, failed: 0, in_flight: 1 })
        assert.deepStrictEqual(rollup.spend, { reserved_micros: SPEND_CEILING_MICROS, settled_micros: 0, unsettled_micros: 43 })
        const during = yield* getJson(`/v1/usage/runs/${runId}`, secret)
        assert.deepStrictEqual(during.calls.map((entry: any) => [entry.provider_request_id, entry.cost_micros]), [["chatcmpl-first", 43]])
        const ledger = (yield* getJson("/v1/usage/ledger", secret)).entries
        assert.deepStrictEqual(ledger.map((entry: any) => entry.provider_request_id), ["chatcmpl-first"])

        yield* upstream.release
        const finished = (yield* Fiber.join(running)).json()
        assert.strictEqual(finished.state, "completed")
        assert.strictEqual(finished.cost_micros, 86)
        const after = yield* getJson("/v1/usage", secret)
        assert.deepStrictEqual(after.spend, { reserved_micros: 0, settled_micros: 86, unsettled_micros: 0 })
        const calls = (yield* getJson(`/v1/usage/runs/${runId}`, secret)).calls
        assert.deepStrictEqual(calls.map((entry: any) => entry.provider_request_id).sort(), ["chatcmpl-first", "chatcmpl-second"])
        const billing = yield* getJson("/v1/billing", secret)
        assert.strictEqual(billing.balance_micros, 100_000 - 86)
        yield* assertMoneyInvariants
      }), { timeout: 30_000 })

    it.effect("a thought answered while its letter call is still out counts as unsettled before the read ends", () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        const { organizationId, secret } = yield* seedOrganization({ billing: true })
        yield* grantCredit(organizationId, 100_000)
        yield* upstream.script(
          { kind: "thought", text: "The customer was charged twice.", usage: { prompt_tokens: 1_000, completion_tokens: 20 }, id: "chatcmpl-thought" },
          { kind: "held", then: { kind: "logprobs", top: { A: 0.9, B: 0.1 }, usage, id: "chatcmpl-letter" } }
        )
        const running = yield* Effect.forkChild(postRun(secret, { ...oneQuestion(), think_tokens: 64 }, freshKey()))
        yield* untilUpstreamReceived(2)
        // Within one read the thought is stored `EarlyRecordDelayMs` after it was answered.
        yield* untilLedgerHas(secret, 1)
        const rollup = yield* getJson("/v1/usage", secret)
        assert.strictEqual(rollup.runs.in_flight, 1)
        assert.strictEqual(rollup.spend.unsettled_micros, 43, "the thought's 1,000 + 20 tokens")
        const ledger = (yield* getJson("/v1/usage/ledger", secret)).entries
        assert.deepStrictEqual(ledger.map((entry: any) => entry.provider_request_id), ["chatcmpl-thought"])
        yield* upstream.release
        const finished = (yield* Fiber.join(running)).json()
        assert.strictEqual(finished.state, "completed")
        assert.strictEqual(finished.cost_micros, 86)
        const after = yield* getJson("/v1/usage", secret)
        assert.deepStrictEqual(after.spend, { reserved_micros: 0, settled_micros: 86, unsettled_micros: 0 })
        yield* assertMoneyInvariants
      }), { timeout: 30_000 })

    it.effect("a run that settles within the delay writes its calls once, at settlement", () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        const { organizationId, secret } = yield* seedOrganization()
        const run = (yield* postRun(secret, oneQuestion())).json()
        assert.strictEqual(run.state, "completed")
        const sql = yield* SqlClient.SqlClient
        const [entries] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ledger_entries WHERE organization_id = ${organizationId}`
        assert.strictEqual(entries!.n, 1)
      }))
  })

  describe("a run whose process died", () => {
    it.effect("the sweeper settles it failed with deadline_exceeded and bills the calls recorded while it ran", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* seedOrganization({ billing: true })
        yield* grantCredit(organizationId, 50_000)
        const spec = Result.getOrThrow(compileRunSpec(oneQuestion() as any, { id: "decision-1", alias: "decision-latest" }))
        const admitted = yield* (yield* RunLedger).admit({
          organizationId,
          origin: "runs",
          idempotencyKey: freshKey(),
          kind: "decision",
          inputDigest: spec.inputDigest,
          holdMicros: SPEND_CEILING_MICROS,
          holdTokens: spec.holdTokens,
          deadline: Date.now() + 60_000,
          keyId: null
        })
        assert.strictEqual(admitted._tag, "Admitted")
        const runId = admitted._tag === "Admitted" ? admitted.run.pending.id : ""
        const early = (yield* CallRecorder).forRun(organizationId)
        early.add([{
          runId,
          callIndex: 0,
          retryOrdinal: 0,
          provider: "openai",
          modelId: "decision-1",
          providerRequestId: "chatcmpl-orphan",
          status: "succeeded",
          inputTokens: 1_000,
          outputTokens: 1,
          costMicros: 43,
          createdAt: new Date()
        }])
        yield* early.flush
        const inFlight = yield* getJson("/v1/usage", secret)
        assert.strictEqual(inFlight.spend.unsettled_micros, 43)

        const sql = yield* SqlClient.SqlClient
        yield* handToDeadHolder([runId])
        yield* untilSteady
        // Swept before its deadline because its process stopped beating (by the test's sweeps or the server's own).
        yield* sweptUntilReleased([runId])
        const [run] = yield* sql<{ state: string; error_code: string | null; cost_micros: number; held: boolean }>`
          SELECT state, error_code, cost_micros, held FROM runs WHERE id = ${runId}::uuid`
        assert.deepStrictEqual(run, { state: "failed", error_code: "deadline_exceeded", cost_micros: 43, held: false })
        const billing = yield* getJson("/v1/billing", secret)
        assert.strictEqual(billing.balance_micros, 50_000 - 43)
        const after = yield* getJson("/v1/usage", secret)
        assert.deepStrictEqual(after.spend, { reserved_micros: 0, settled_micros: 43, unsettled_micros: 0 })
        yield* assertMoneyInvariants
      }))
  })
})
