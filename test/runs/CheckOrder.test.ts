/**
 * The order of checks on `POST /v1/runs` (spec: 1 credential; 2 body shape and size (what the headers tell of it; the
 * rest of the body after the scope, decisions.md "Slow clients"); 3 scope; 4 idempotency key
 * format; 5 prompt shape, question set or schema, model, capability hint; 6 input size; 7 data store; 8 quota;
 * 9 idempotency conflict; 10 credits; 11 route and model): for each neighbouring pair, a request failing both
 * answers with the earlier.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { CreditStore } from "../../src/ledger/CreditStore.js"
import { QuotaLedger } from "../../src/ledger/QuotaLedger.js"
import { codeOf } from "../support/Api.js"
import { freshKey, oneQuestion, postRun } from "../support/Runs.js"
import { seedKey, seedOrganization } from "../support/Seed.js"
import { TestServerWithUpstreamLive } from "../support/TestServer.js"

const expect = (response: { status: number; text: string }, status: number, code: string | undefined, what: string) => {
  assert.strictEqual(response.status, status, `${what}: ${response.text.slice(0, 200)}`)
  assert.strictEqual(codeOf(response as any), code, what)
}

const badQuestions = { kind: "decision", state: "s", questions: {} }
const badHint = "Bad Hint"
const badHintMessage = `invalid request body: capability_hint: Expected a string matching the pattern ^[a-z0-9_.:-]{1,64}$, actual "${badHint}"`
const huge = (extra: Record<string, unknown> = {}) => oneQuestion({ state: "x".repeat(1_100_000), ...extra })

layer(TestServerWithUpstreamLive(), { excludeTestServices: true, timeout: "120 seconds" })("POST /v1/runs check order", (it) => {
  describe("each check before the next", () => {
    it.effect("1 credential before 2 body: no credential and a malformed or 5 MiB body is 401", () =>
      Effect.gen(function*() {
        expect(yield* postRun("", oneQuestion(), freshKey(), { rawBody: "{" , headers: { authorization: "" } }), 401, "missing_credentials", "malformed")
        expect(yield* postRun("", oneQuestion(), freshKey(), { rawBody: "x".repeat(5 * 1024 * 1024), headers: { authorization: "" } }), 401, "missing_credentials", "5 MiB")
      }))

    it.effect("2 body before 3 scope, as far as the headers tell: a read-only key with an untyped or 5 MiB body is 400/413", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const reader = yield* seedKey(organization.organizationId, organization.ownerId, ["runs_read"])
        expect(yield* postRun(reader.secret, oneQuestion(), freshKey(), { headers: { "content-type": "text/plain" } }), 400, "invalid_body", "content type")
        expect(yield* postRun(reader.secret, null, freshKey(), { rawBody: "x".repeat(5 * 1024 * 1024) }), 413, "body_too_large", "5 MiB")
      }))

    it.effect("3 scope before the body's content: the scope is checked from the headers, before the body is read", () =>
      Effect.gen(function*() {
        // decisions.md, Precise rules, "Slow clients": a credential lacking the scope waits for no upload, so what only
        // the body's content can tell (malformed, unknown field, out of range) comes after the scope.
        const organization = yield* seedOrganization()
        const reader = yield* seedKey(organization.organizationId, organization.ownerId, ["runs_read"])
        expect(yield* postRun(reader.secret, null, freshKey(), { rawBody: "{" }), 403, "scope_denied", "malformed")
        expect(yield* postRun(reader.secret, { ...oneQuestion(), extra: 1 }), 403, "scope_denied", "unknown field")
        expect(yield* postRun(reader.secret, oneQuestion({ draws: 9 })), 403, "scope_denied", "draws out of range")
      }))

    it.effect("3 scope before 4 key format: a read-only key without an idempotency key is 403", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const reader = yield* seedKey(organization.organizationId, organization.ownerId, ["runs_read"])
        expect(yield* postRun(reader.secret, oneQuestion(), null), 403, "scope_denied", "no key")
      }))

    it.effect("3 scope before 5 capability hint: a read-only key with a bad capability_hint is 403", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const reader = yield* seedKey(organization.organizationId, organization.ownerId, ["runs_read"])
        expect(yield* postRun(reader.secret, oneQuestion({ capability_hint: badHint })), 403, "scope_denied", "bad hint")
        expect(yield* postRun(reader.secret, oneQuestion({ capability_hint: badHint }), null), 403, "scope_denied", "bad hint, no key")
      }))

    it.effect("4 key format before 5 contract: a bad question set without an idempotency key is 400 idempotency_key_required", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        expect(yield* postRun(organization.secret, badQuestions, null), 400, "idempotency_key_required", "no key")
        expect(yield* postRun(organization.secret, badQuestions, ""), 400, "invalid_idempotency_key", "empty key")
      }))

    it.effect("4 key format before 5 capability hint: a bad capability_hint without an idempotency key is 400 idempotency_key_required", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        expect(yield* postRun(organization.secret, oneQuestion({ capability_hint: badHint }), null), 400, "idempotency_key_required", "no key")
        expect(yield* postRun(organization.secret, oneQuestion({ capability_hint: badHint }), "bad key"), 400, "invalid_idempotency_key", "bad key")
      }))

    it.effect("5: the capability hint after the question set, model or schema, with the body schema's code and message", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const refused = yield* postRun(organization.secret, oneQuestion({ capability_hint: badHint }))
        expect(refused, 400, "invalid_body", "bad hint")
        assert.strictEqual(refused.json().error.message, badHintMessage)
        for (const hint of ["", "x".repeat(65), "UPPER", "tab\t", "é"]) {
          expect(yield* postRun(organization.secret, oneQuestion({ capability_hint: hint })), 400, "invalid_body", JSON.stringify(hint))
        }
        expect(yield* postRun(organization.secret, { ...badQuestions, capability_hint: badHint }), 400, "invalid_decision_questions", "questions first")
        expect(yield* postRun(organization.secret, oneQuestion({ model: "gpt-9", capability_hint: badHint })), 400, "unknown_model", "model first")
        expect(
          yield* postRun(organization.secret, { kind: "verdict", state: "s", schema: { type: "nonsense" }, capability_hint: badHint }),
          400,
          "invalid_verdict_schema",
          "verdict schema first"
        )
        expect(yield* postRun(organization.secret, { kind: "verdict", state: "s", schema: { type: "object" }, capability_hint: badHint }), 400, "invalid_body", "verdict hint")
        expect(yield* postRun(organization.secret, { kind: "verdict", state: "s", capability_hint: 5 }), 400, "invalid_body", "a hint that is not a string is a schema mismatch")
        const accepted = yield* postRun(organization.secret, oneQuestion({ capability_hint: "fast.cheap:v1-2_x" }))
        assert.strictEqual(accepted.status, 200, accepted.text)
        const longest = yield* postRun(organization.secret, oneQuestion({ capability_hint: "a".repeat(64) }))
        assert.strictEqual(longest.status, 200, longest.text)
      }))

    it.effect("5 contract before 6 input size: a huge prompt with a bad question set, model or schema is 400", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        expect(yield* postRun(organization.secret, { ...huge(), questions: {} }), 400, "invalid_decision_questions", "questions")
        expect(yield* postRun(organization.secret, huge({ model: "gpt-9" })), 400, "unknown_model", "model")
        expect(yield* postRun(organization.secret, huge({ messages: [{ role: "user", content: "hi" }] })), 400, "invalid_body", "prompt shape")
        const hint = yield* postRun(organization.secret, huge({ capability_hint: badHint }))
        expect(hint, 400, "invalid_body", "capability hint")
        assert.strictEqual(hint.json().error.message, badHintMessage)
        expect(
          yield* postRun(organization.secret, { kind: "verdict", state: "x".repeat(300_000), schema: { type: "nonsense" } }),
          400,
          "invalid_verdict_schema",
          "verdict schema"
        )
      }))

    it.effect("6 input size before 8 quota: an oversized input with the quota spent is 413 input_too_large", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        yield* (yield* QuotaLedger).setLimits(organization.organizationId, { spendLimitMicros: 0, tokenLimit: 0 })
        expect(yield* postRun(organization.secret, huge()), 413, "input_too_large", "decision")
        expect(
          yield* postRun(organization.secret, { kind: "verdict", state: "x".repeat(260_000), schema: { type: "object" } }),
          413,
          "input_too_large",
          "verdict over 64,000"
        )
        expect(yield* postRun(organization.secret, oneQuestion()), 429, "organization_spend_quota_exhausted", "within size")
      }))

    it.effect("8 quota before 9 conflict, 9 conflict before 10 credits, 10 credits before 11 the route", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization({ billing: true })
        const verdict = { kind: "verdict", state: "s", schema: { type: "object" } }
        expect(yield* postRun(organization.secret, verdict), 402, "insufficient_credits", "credits before the route")
        const unbilled = yield* seedOrganization()
        const used = freshKey()
        assert.strictEqual((yield* postRun(unbilled.secret, oneQuestion(), used)).status, 200)
        yield* (yield* CreditStore).setBilling(unbilled.organizationId, true)
        expect(yield* postRun(unbilled.secret, oneQuestion({ state: "other" }), used), 409, "idempotency_conflict", "conflict before credits")
        yield* (yield* QuotaLedger).setLimits(unbilled.organizationId, { spendLimitMicros: null, tokenLimit: 5 })
        expect(yield* postRun(unbilled.secret, oneQuestion({ state: "other" }), used), 429, "organization_token_quota_exhausted", "quota before conflict")
      }))
  })
})
