/**
 * Auto-recharge: after a settlement leaves an organization's balance under its threshold, one off-session charge of
 * the configured amount, recorded as its own `auto_recharge` transaction. One recharge at a time per organization
 * (an atomic claim in the database, across processes); the charge's idempotency key is the claim's id, so a claim
 * retaken after a crash replays the processor's answer instead of charging again; a recharge that leaves the balance
 * still under the threshold disarms further ones until credit arrives by other means (one dip, one charge);
 * failures are recorded, shown in `GET /v1/billing` and cooled down (never retried in a loop).
 */
import { Context, Effect, Layer, Option } from "effect"
import { randomBytes } from "node:crypto"
import type { DatabaseUnavailable } from "../../schema/Errors.js"
import { newTransactionId } from "../ids/Ids.js"
import { BillingRepo } from "./BillingRepo.js"
import { PaymentProcessor } from "./PaymentProcessor.js"

/** How long a claimed recharge may run before another process may retake it (with the same id). */
export const RechargeStaleSeconds = 300
/** Cool-down after a declined charge or one needing the customer's action. */
export const DeclinedCoolDownSeconds = 3_600
/** Cool-down after the processor could not be reached. */
export const UnreachableCoolDownSeconds = 120

/** What one recharge attempt came to. */
export type RechargeOutcome = "not_needed" | "charged" | "failed"

/** Auto-recharge's operations. */
export interface AutoRechargeService {
  /** Recharges the organization now if it needs it; says what happened. */
  readonly recharge: (organizationId: string) => Effect.Effect<RechargeOutcome, DatabaseUnavailable>
  /**
   * After a settlement: recharges in the background when settlement found the balance under the threshold with
   * a recharge allowed (the recharge's own claim decides, atomically, whether it runs).
   */
  readonly afterSettlement: (organizationId: string, result: { readonly rechargeDue: boolean }) => Effect.Effect<void>
}

const make = Effect.gen(function*() {
  const repo = yield* BillingRepo
  const processor = yield* PaymentProcessor

  const recharge = (organizationId: string): Effect.Effect<RechargeOutcome, DatabaseUnavailable> =>
    Effect.gen(function*() {
      const claim = yield* repo.claimRecharge(organizationId, `rch_${randomBytes(16).toString("hex")}`, RechargeStaleSeconds)
      if (Option.isNone(claim)) return "not_needed" as const
      const { amount_micros, customer_id, payment_method_id, recharge_id } = claim.value
      const outcome = yield* Effect.result(processor.chargeOffSession({
        organizationId,
        customerId: customer_id,
        paymentMethodId: payment_method_id,
        amountMicros: amount_micros,
        idempotencyKey: recharge_id
      }))
      if (outcome._tag === "Failure") {
        yield* repo.finishRecharge(organizationId, recharge_id, {
          reason: `processor_unreachable: ${outcome.failure.message}`,
          coolDownSeconds: UnreachableCoolDownSeconds
        })
        return "failed" as const
      }
      if (outcome.success.status !== "succeeded") {
        yield* repo.finishRecharge(organizationId, recharge_id, {
          reason: `${outcome.success.status}: ${outcome.success.reason}`,
          coolDownSeconds: DeclinedCoolDownSeconds
        })
        return "failed" as const
      }
      yield* repo.credit({
        organizationId,
        id: newTransactionId(),
        kind: "auto_recharge",
        amountMicros: amount_micros,
        description: "Auto-recharge",
        externalRef: `recharge:${recharge_id}`
      })
      yield* repo.finishRecharge(organizationId, recharge_id, null)
      return "charged" as const
    })

  return AutoRecharge.of({
    recharge,
    afterSettlement: (organizationId, result) =>
      result.rechargeDue
        ? Effect.asVoid(Effect.forkDetach(
          recharge(organizationId).pipe(Effect.catch((error) => Effect.logWarning("auto-recharge failed", error)))
        ))
        : Effect.void
  })
})

/** Auto-recharge. */
export class AutoRecharge extends Context.Service<AutoRecharge, AutoRechargeService>()("AutoRecharge") {
  /** Auto-recharge over billing's storage and the payment processor. */
  static readonly layer = Layer.effect(AutoRecharge, make)
}
