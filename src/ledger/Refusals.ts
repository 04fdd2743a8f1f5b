/**
 * The contract's errors for runs admission refuses the exact way (Admission.ts decides, in the contract's order of
 * checks): the organization's quota (429), the key's limits (429), the idempotency key's conflict (409), credit (402).
 */
import {
  IdempotencyConflict,
  InsufficientCredits,
  KeyQuotaExhausted,
  KeyRateLimited,
  OrganizationSpendQuotaExhausted,
  OrganizationTokenQuotaExhausted
} from "../../schema/Errors.js"
import type { ExactOutcome } from "./Admission.js"
import type { KeyRefusal } from "./KeyAccounts.js"

/** The contract's errors for a refused run. */
export type Refusal =
  | OrganizationSpendQuotaExhausted
  | OrganizationTokenQuotaExhausted
  | IdempotencyConflict
  | InsufficientCredits
  | KeyQuotaExhausted
  | KeyRateLimited

/** The contract's error for a run the exact way refused, its message saying what was asked and what was left. */
export const refusal = (
  outcome: Exclude<ExactOutcome, { _tag: "Stored" | "Replayed" | "NoOrganization" }>,
  key: string
): Refusal => {
  switch (outcome._tag) {
    case "Conflict":
      return new IdempotencyConflict({ message: `idempotency key ${JSON.stringify(key)} was used with a different body` })
    case "Quota": {
      const { asked, held, limit, quota, used } = outcome.refusal
      return quota === "spend"
        ? new OrganizationSpendQuotaExhausted({
          message: `period spend quota: limit ${limit} micro-USD, used ${used}, held ${held}, this run asks for ${asked}`
        })
        : new OrganizationTokenQuotaExhausted({
          message: `period token quota: limit ${limit} tokens, used ${used}, held ${held}, this run asks for ${asked}`
        })
    }
    case "Key":
      return keyRefusal(outcome.refusal)
    case "Credit":
      return new InsufficientCredits({
        message: `available credit of ${Math.max(0, outcome.refusal.available)} micro-USD cannot hold the run's ` +
          `ceiling of ${outcome.refusal.asked}; add credit and send the request again`
      })
  }
}

/** `429` for a key's limits: its rate (with when to retry), or its spend or token limit for its period. */
const keyRefusal = (refusal: KeyRefusal) => {
  if (refusal._tag === "KeyRate") {
    return new KeyRateLimited({
      message: `the key's limit of ${refusal.runsPerMinute} runs per minute is reached; retry in ` +
        `${refusal.retryAfterSeconds} s`,
      retry_after_seconds: refusal.retryAfterSeconds
    })
  }
  const { asked, held, limit, period, quota, used } = refusal
  const unit = quota === "spend" ? "micro-USD" : "tokens"
  const span = period === "total" ? "in total" : `this ${period}`
  return new KeyQuotaExhausted({
    message: `the key's ${quota} limit ${span}: limit ${limit} ${unit}, used ${used}, held ${held}, ` +
      `this run asks for ${asked}`
  })
}
