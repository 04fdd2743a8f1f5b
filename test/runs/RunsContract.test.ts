/**
 * The runs routes against the shared route contract (authentication, every scope, the whole role table), plus what
 * the built-in local model answers with the embedded defaults, Server-Timing on refusals, and the sweeper.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Result } from "effect"
import { SqlClient } from "effect/sql"
import type { ServerAddress } from "../../src/server/Listen.js"
import { RunLedger } from "../../src/ledger/RunLedger.js"
import { sweepOnce } from "../../src/ledger/Sweeper.js"
import { SPEND_CEILING_MICROS } from "../../src/runs/RunLimits.js"
import { compileRunSpec } from "../../src/runs/RunSpec.js"
import { codeOf } from "../support/Api.js"
import { assertMoneyInvariants, grantCredit } from "../support/Invariants.js"
import { handToDeadHolder, sweptUntilReleased, untilSteady } from "../support/DeadHolder.js"
import { checkAuthentication, checkRoles, checkScopes, route, type RouteCase } from "../support/RouteContract.js"
import { freshKey, oneQuestion, postRun } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerWithConsoleLive } from "../support/TestServer.js"

const existingRun = (suffix: string): RouteCase<ServerAddress> => ({
  method: "GET",
  scope: "runs_read",
  path: (organization) =>
    Effect.map(postRun(organization.secret, oneQuestion()).pipe(Effect.orDie), (response) => `/v1/runs/${response.json().run_id}${suffix}`)
})

/** The admission request of the one-question run of `POST /v1/runs`, made directly (to control its deadline). */
const oneQuestionAdmission = (organizationId: string, idempotencyKey: string, deadline: number) => {
  const spec = Result.getOrThrow(compileRunSpec(oneQuestion() as any, { id: "decision-1", alias: "decision-latest" }))
  return {
    organizationId,
    origin: "runs" as const,
    idempotencyKey,
    kind: "decision" as const,
    inputDigest: spec.inputDigest,
    holdMicros: SPEND_CEILING_MICROS,
    holdTokens: spec.holdTokens,
    deadline,
    keyId: null
  }
}

const RunsRoutes: ReadonlyArray<RouteCase<ServerAddress>> = [
  {
    ...route("POST", "/v1/runs", "runs_write", { body: oneQuestion() }),
    path: () => Effect.succeed("/v1/runs"),
    headers: { "idempotency-key": "contract-key" }
  },
  route("GET", "/v1/runs", "runs_read"),
  existingRun(""),
  existingRun("/stream")
]

layer(TestServerWithConsoleLive({ ledgerLeaseTtlSeconds: 2 }), { excludeTestServices: true, timeout: "180 seconds" })("runs route contract", (it) => {
  describe("contract", () => {
    it.effect("every runs route: 401 codes, credential before body", () => checkAuthentication(RunsRoutes))
    it.effect("every runs route against every scope", () => checkScopes(RunsRoutes))
    it.effect("every runs route against the whole role table", () => checkRoles(RunsRoutes))
  })

  describe("the local model (the embedded default)", () => {
    it.effect("answers a decision offline, deterministically: the option whose words match the state wins", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const body = {
          kind: "decision",
          state: { ticket: "I was charged twice on my invoice; please refund the duplicate payment." },
          questions: {
            refund: { type: "noul", instructions: "Does the customer ask for a refund?" },
            topic: { type: "choice", instructions: "What is it about?", criteria: { billing: "invoice, payment, refund", shipping: "parcel, delivery", login: "password, account" } }
          }
        }
        const first = (yield* postRun(organization.secret, body)).json()
        const second = (yield* postRun(organization.secret, body)).json()
        assert.strictEqual(first.state, "completed")
        assert.strictEqual(first.decision.answers.topic.choice, "billing")
        assert.isAbove(first.decision.answers.refund.probability, 0.5)
        assert.deepStrictEqual(second.decision, first.decision)
        assert.strictEqual(second.output_digest, first.output_digest)
      }))
  })

  describe("Server-Timing", () => {
    it.effect("is on refusals too (402, 429, 400)", () =>
      Effect.gen(function*() {
        const billed = yield* seedOrganization({ billing: true })
        const refused = yield* postRun(billed.secret, oneQuestion())
        assert.strictEqual(codeOf(refused), "insufficient_credits")
        assert.match(String(refused.headers["server-timing"]), /total;dur=/)
        const admitted = /admit;dur=([0-9.]+)/.exec(String(refused.headers["server-timing"]))
        assert.isAbove(Number(admitted?.[1]), 0, "a refusal by admission reports the time admission took")
        const invalid = yield* postRun(billed.secret, oneQuestion({ questions: {} }))
        assert.strictEqual(codeOf(invalid), "invalid_decision_questions")
        assert.match(String(invalid.headers["server-timing"]), /admit;dur=0\.000/)
      }))
  })

  describe("admission", () => {
    it.effect("a run whose deadline passed while it waited for its batch is refused 504 and stores nothing", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, 20_000)
        const key = freshKey()
        const refused = yield* Effect.flip((yield* RunLedger).admit(
          oneQuestionAdmission(organization.organizationId, key, Date.now() - 1)
        ))
        assert.strictEqual(refused._tag, "deadline_exceeded")
        const sql = yield* SqlClient.SqlClient
        const [stored] = yield* sql<{ runs: number; reserved: number }>`SELECT
          (SELECT count(*)::int FROM runs WHERE organization_id = ${organization.organizationId}) AS runs,
          (SELECT COALESCE(sum(hold_micros), 0)::int FROM runs
            WHERE organization_id = ${organization.organizationId} AND held) AS reserved`
        assert.deepStrictEqual(stored, { runs: 0, reserved: 0 })
        const accepted = yield* postRun(organization.secret, oneQuestion(), key)
        assert.strictEqual(accepted.status, 200, "the key stays reusable")
        yield* assertMoneyInvariants
      }))
  })

  /** An organization with credit and one run admitted under a fresh key, its deadline `deadlineMs` away. */
  const admittedRun = (deadlineMs: number) =>
    Effect.gen(function*() {
      const organization = yield* seedOrganization({ billing: true })
      yield* grantCredit(organization.organizationId, 20_000)
      const key = freshKey()
      const admitted = yield* (yield* RunLedger).admit(
        oneQuestionAdmission(organization.organizationId, key, Date.now() + deadlineMs)
      )
      assert.strictEqual(admitted._tag, "Admitted")
      return { organization, key, runId: admitted._tag === "Admitted" ? admitted.run.pending.id : "" }
    })

  describe("the sweeper", () => {
    it.effect("releases the holds of a run whose process stopped beating, before its deadline; the run stays pending", () =>
      Effect.gen(function*() {
        const { organization, key, runId } = yield* admittedRun(120_000)
        const blocked = yield* postRun(organization.secret, oneQuestion({ state: "another" }))
        assert.strictEqual(codeOf(blocked), "insufficient_credits", "the abandoned run still holds the credit")
        yield* untilSteady
        assert.strictEqual(yield* sweepOnce, 0, "not while its process beats")
        yield* handToDeadHolder([runId])
        yield* sweptUntilReleased([runId])
        const replay = yield* postRun(organization.secret, oneQuestion(), key)
        assert.strictEqual(replay.status, 202)
        assert.strictEqual(replay.json().state, "pending")
        const freed = yield* postRun(organization.secret, oneQuestion({ state: "another" }))
        assert.strictEqual(freed.status, 200)
        yield* assertMoneyInvariants
      }))

    it.effect("a run admitted before holders existed is released a minute after its deadline", () =>
      Effect.gen(function*() {
        const { organization, key, runId } = yield* admittedRun(1_000)
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE runs SET holder = NULL WHERE organization_id = ${organization.organizationId}`
        assert.strictEqual(yield* sweepOnce, 0, "not before its deadline plus the margin")
        yield* sql`UPDATE runs SET deadline_at = now() - interval '61 seconds' WHERE organization_id = ${organization.organizationId}`
        yield* sweptUntilReleased([runId])
        assert.strictEqual((yield* postRun(organization.secret, oneQuestion(), key)).status, 202)
        yield* assertMoneyInvariants
      }))

    it.effect("a run whose holder row is gone is released a minute after its deadline", () =>
      Effect.gen(function*() {
        const { organization, key, runId } = yield* admittedRun(1_000)
        const sql = yield* SqlClient.SqlClient
        // A holder id no `ledger_holders` row has: the row was forgotten while the run was being admitted.
        yield* sql`UPDATE runs SET holder = 'h_forgotten' WHERE id = ${runId}::uuid`
        const blocked = yield* postRun(organization.secret, oneQuestion({ state: "another" }))
        assert.strictEqual(codeOf(blocked), "insufficient_credits", "the run still holds the credit")
        assert.strictEqual(yield* sweepOnce, 0, "not before its deadline plus the margin")
        yield* sql`UPDATE runs SET deadline_at = now() - interval '61 seconds' WHERE id = ${runId}::uuid`
        yield* sweptUntilReleased([runId])
        assert.strictEqual((yield* postRun(organization.secret, oneQuestion(), key)).status, 202)
        assert.strictEqual((yield* postRun(organization.secret, oneQuestion({ state: "another" }))).status, 200)
        yield* assertMoneyInvariants
      }))
  })
})
