/**
 * `schema/Errors.ts` against the contract's tables: every code the spec and decisions.md list exists with its
 * status, no code is defined twice, and no class answers with a code the tables do not list.
 */
import { assert, describe, it } from "@effect/vitest"
import { ErrorClasses, statusOf } from "../../schema/Errors.js"

const ContractCodes: Record<number, ReadonlyArray<string>> = {
  400: [
    "invalid_body",
    "idempotency_key_required",
    "invalid_idempotency_key",
    "invalid_verdict_schema",
    "invalid_decision_questions",
    "unknown_model",
    "invalid_parameter",
    "empty_scopes",
    "invalid_policy",
    "weights_require_balanced",
    "unknown_model_id",
    "no_eligible_model",
    "invalid_amount"
  ],
  401: ["missing_credentials", "invalid_credential"],
  402: ["insufficient_credits"],
  // limits_exceed_creator: decisions.md, "Extensions beyond the contract" (limit containment).
  403: ["scope_denied", "no_active_organization", "scope_exceeds_creator", "limits_exceed_creator", "principal_is_not_the_caller"],
  404: ["run_not_found", "key_not_found"],
  409: ["idempotency_conflict", "key_revoked", "payment_method_required"],
  413: ["body_too_large", "input_too_large"],
  // The last two: decisions.md, "Extensions beyond the contract" (per-key limits).
  429: ["organization_token_quota_exhausted", "organization_spend_quota_exhausted", "key_quota_exhausted", "key_rate_limited"],
  500: ["internal_error"],
  503: [
    "no_route_available",
    "decision_unavailable",
    "provider_rate_limited",
    "provider_unavailable",
    "provider_bad_response",
    "verdict_schema_violation",
    "budget_exhausted",
    "auth_not_configured",
    "trust_keys_unavailable",
    "database_unavailable",
    "not_configured"
  ],
  504: ["deadline_exceeded"]
}

describe("schema/Errors.ts", () => {
  it("defines each code once", () => {
    const tags = ErrorClasses.map((cls) => cls._tag)
    assert.strictEqual(new Set(tags).size, tags.length)
  })

  it("answers every code of the contract with the contract's status", () => {
    const byTag = new Map(ErrorClasses.map((cls) => [cls._tag, statusOf(cls)]))
    for (const [status, codes] of Object.entries(ContractCodes)) {
      for (const code of codes) {
        assert.strictEqual(byTag.get(code), Number(status), code)
      }
    }
  })

  it("defines no code the contract does not list", () => {
    const listed = new Set(Object.values(ContractCodes).flat())
    for (const cls of ErrorClasses) assert.isTrue(listed.has(cls._tag), cls._tag)
  })
})
