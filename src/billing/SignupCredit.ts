/**
 * The one-time sign-up credit (spec, Billing): 5,000,000 micro-USD when an organization is created for a verified
 * owner, once per e-mail address. Addresses are compared normalized: trimmed, lower-cased, without a `+tag` in the
 * local part, and for Gmail without dots (googlemail.com counts as gmail.com), so `A.Da+x@GMail.com` and
 * `ada@gmail.com` are one address. The one billing operation organization set-up calls (`SignupCredit.grant`).
 */
import { Context, Effect, Layer } from "effect"
import type { DatabaseUnavailable } from "../../schema/Errors.js"
import { newTransactionId } from "../ids/Ids.js"
import { BillingRepo } from "./BillingRepo.js"

/** The sign-up credit in micro-USD. */
const SignupCreditMicros = 5_000_000

/** The normalized form of an e-mail address. */
const normalizeEmail = (email: string): string => {
  const trimmed = email.trim().toLowerCase()
  const at = trimmed.lastIndexOf("@")
  if (at <= 0) return trimmed
  let local = trimmed.slice(0, at)
  let domain = trimmed.slice(at + 1)
  const plus = local.indexOf("+")
  if (plus > 0) local = local.slice(0, plus)
  if (domain === "googlemail.com") domain = "gmail.com"
  if (domain === "gmail.com") local = local.replace(/\./g, "")
  return `${local}@${domain}`
}

/** The sign-up credit's operation. */
export interface SignupCreditService {
  /**
   * Credits a new organization of a verified owner with the sign-up credit, unless the owner's address (normalized)
   * had it already; true when it was credited. Runs in the caller's transaction, so the organization and its credit
   * are stored together or not at all.
   */
  readonly grant: (organizationId: string, ownerEmail: string) => Effect.Effect<boolean, DatabaseUnavailable>
}

/** The sign-up credit. */
export class SignupCredit extends Context.Service<SignupCredit, SignupCreditService>()("SignupCredit") {
  /** The sign-up credit over billing's storage. */
  static readonly layer = Layer.effect(
    SignupCredit,
    Effect.gen(function*() {
      const billing = yield* BillingRepo
      return SignupCredit.of({
        grant: (organizationId, ownerEmail) =>
          Effect.gen(function*() {
            const email = normalizeEmail(ownerEmail)
            if (!(yield* billing.claimSignup(email, organizationId))) return false
            return yield* billing.credit({
              organizationId,
              id: newTransactionId(),
              kind: "signup_credit",
              amountMicros: SignupCreditMicros,
              description: "Sign-up credit",
              externalRef: `signup:${email}`
            })
          })
      })
    })
  )
}
