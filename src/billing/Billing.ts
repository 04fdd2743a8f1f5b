/**
 * Billing: the balance and its transactions, credit purchases through the payment processor's checkout (credited
 * exactly once, when the processor confirms payment: Stripe's webhook, or the local processor's own page), the
 * processor's portal, and the auto-recharge settings. Checkouts and recharges are 5 to 1,000 dollars in whole cents
 * (they are charged, and no processor charges a fraction of a cent); the auto-recharge threshold, never charged, is
 * any whole number of micro-USD from 0 to 1,000 dollars. Any other amount the schema let through (a non-negative
 * JSON number, possibly huge or fractional) is `400 invalid_amount`.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { AutoRechargeRequest, AutoRechargeSettings, BillingSummary, Checkout, Portal } from "../../schema/BillingApi.js"
import { type DatabaseUnavailable, InvalidAmount, NotConfigured, PaymentMethodRequired } from "../../schema/Errors.js"
import { formatTimestamp } from "../../schema/Ids.js"
import { AppConfig } from "../config/AppConfig.js"
import { newTransactionId } from "../ids/Ids.js"
import { BillingRepo, type BillingRepoService } from "./BillingRepo.js"
import type { CheckoutRow, SettingsRow } from "./BillingRows.js"
import { type InvalidWebhook, PaymentProcessor, type ProcessorEvent } from "./PaymentProcessor.js"

/** Fewest micro-USD of a purchase or recharge (5 dollars). */
export const MinPurchaseMicros = 5_000_000
/** Most micro-USD of a purchase, a recharge or a threshold (1,000 dollars). */
export const MaxPurchaseMicros = 1_000_000_000
/** How long a checkout link stays open. */
export const CheckoutLifetimeMs = 60 * 60_000

const MicrosPerCent = 10_000

/** A processor's report that a checkout was paid. */
export type CompletedCheckout = Extract<ProcessorEvent, { kind: "checkout_completed" }>

/** The bounds of one amount field. */
interface AmountRule {
  readonly name: string
  readonly min: number
  /** True for an amount that is charged: it must be whole cents. */
  readonly charged: boolean
}

const PurchaseAmount: AmountRule = { name: "amount_micros", min: MinPurchaseMicros, charged: true }
const RechargeAmount: AmountRule = { name: "amount_micros", min: MinPurchaseMicros, charged: true }
const RechargeThreshold: AmountRule = { name: "threshold_micros", min: 0, charged: false }

/**
 * `400 invalid_amount` unless `value` is a whole number within the rule's bounds (the schema passes any
 * non-negative JSON number, so this also refuses fractions, `1e30` and numbers past 2^53) and, for a charged amount,
 * whole cents.
 */
const checkAmount = (rule: AmountRule, value: number): Effect.Effect<void, InvalidAmount> =>
  !Number.isSafeInteger(value) || value < rule.min || value > MaxPurchaseMicros
    ? Effect.fail(new InvalidAmount({
      message: `${rule.name} must be a whole number of micro-USD from ${rule.min} to ${MaxPurchaseMicros}, got ${value}`
    }))
    : rule.charged && value % MicrosPerCent !== 0
    ? Effect.fail(new InvalidAmount({
      message: `${rule.name} must be whole cents (a multiple of ${MicrosPerCent} micro-USD), got ${value}: it is ` +
        "charged to a card, and a payment processor cannot charge a fraction of a cent"
    }))
    : Effect.void

/** The auto-recharge settings as the API shows them. */
export const autoRechargeView = (settings: SettingsRow) => ({
  enabled: settings.auto_recharge_enabled,
  threshold_micros: settings.auto_recharge_threshold_micros,
  amount_micros: settings.auto_recharge_amount_micros,
  payment_method: settings.payment_method_id === null
    ? null
    : { id: settings.payment_method_id, brand: settings.payment_method_brand, last4: settings.payment_method_last4 },
  last_failure: settings.recharge_failed_at === null
    ? null
    : {
      reason: settings.recharge_failure_reason ?? "",
      failed_at: formatTimestamp(settings.recharge_failed_at),
      retry_at: settings.recharge_retry_after === null ? null : formatTimestamp(settings.recharge_retry_after)
    }
})

/** The billing service's operations. */
export interface BillingService {
  /** Balance, holds, auto-recharge settings and the last 50 transactions, newest first. */
  readonly summary: (organizationId: string) => Effect.Effect<typeof BillingSummary.Type, DatabaseUnavailable>
  /** Opens a checkout for a purchase of credit. */
  readonly checkout: (
    organizationId: string,
    amountMicros: number
  ) => Effect.Effect<typeof Checkout.Type, InvalidAmount | NotConfigured | DatabaseUnavailable>
  /** Opens the processor's billing portal. */
  readonly portal: (organizationId: string) => Effect.Effect<typeof Portal.Type, NotConfigured | DatabaseUnavailable>
  /** Saves the auto-recharge settings; enabling needs a saved payment method. */
  readonly setAutoRecharge: (
    organizationId: string,
    input: typeof AutoRechargeRequest.Type
  ) => Effect.Effect<typeof AutoRechargeSettings.Type, InvalidAmount | PaymentMethodRequired | DatabaseUnavailable>
  /**
   * Credits a paid checkout once, the amount stored with it, in one transaction with the processor event that
   * reported it (so a delivery that fails half-way is redelivered and credited); false when it was credited before,
   * is unknown, or does not match the checkout (`via` names the processor reporting the payment).
   */
  readonly completeCheckout: (
    event: CompletedCheckout,
    method: { readonly brand: string | null; readonly last4: string | null },
    via: string
  ) => Effect.Effect<boolean, DatabaseUnavailable>
  /** A processor webhook: verified, recorded once, and acted on. */
  readonly handleWebhook: (
    rawBody: string,
    signature: string | undefined
  ) => Effect.Effect<{ readonly received: boolean; readonly credited: boolean }, InvalidWebhook | DatabaseUnavailable>
}

const processorFailure = (error: { message: string }) =>
  Effect.andThen(
    Effect.logWarning("payment processor failure", error.message),
    Effect.fail(new NotConfigured({ message: "the payment processor could not be reached; try again shortly" }))
  )

/**
 * Why a reported payment must not complete its checkout: it names another processor's checkout, another session
 * than the one the checkout opened, or another amount than the one asked (a signed $1 payment never completes a
 * $5 checkout). Null when it matches.
 */
const mismatch = (checkout: CheckoutRow, event: CompletedCheckout, via: string): string | null =>
  checkout.processor !== via
    ? `checkout ${checkout.id} belongs to the ${checkout.processor} processor, not ${via}`
    : checkout.processor_ref !== event.processorRef
    ? `checkout ${checkout.id} was opened as ${checkout.processor_ref ?? "no session"}, not ${event.processorRef}`
    : checkout.amount_micros !== event.amountMicros
    ? `checkout ${checkout.id} asked ${checkout.amount_micros} micro-USD, the payment was ${event.amountMicros}`
    : null

/** What the operations below stand on. */
interface Deps {
  readonly repo: BillingRepoService
  readonly processor: typeof PaymentProcessor.Service
  /** The public base URL the processor sends the customer back to. */
  readonly base: string
}

const completeCheckout = ({ repo }: Deps): BillingService["completeCheckout"] => (event, method, via) =>
  repo.transaction(Effect.gen(function*() {
    if (!(yield* repo.recordEvent(event.eventId, event.kind))) return false
    const found = yield* repo.checkout(event.checkoutId)
    if (Option.isNone(found)) return false
    const refused = mismatch(found.value, event, via)
    if (refused !== null) {
      yield* Effect.logWarning(`payment not credited: ${refused}`)
      return false
    }
    const paid = yield* repo.markPaid(event.checkoutId)
    if (Option.isNone(paid)) return false
    const checkout = paid.value
    yield* repo.credit({
      organizationId: checkout.organization_id,
      id: newTransactionId(),
      kind: "purchase",
      amountMicros: checkout.amount_micros,
      description: `Credit purchase (${checkout.id})`,
      externalRef: `checkout:${checkout.id}`
    })
    yield* repo.saveCustomer(
      checkout.organization_id,
      event.customerId,
      event.paymentMethodId === null ? null : { id: event.paymentMethodId, ...method }
    )
    yield* repo.rearm(checkout.organization_id)
    return true
  }))

const summary = ({ repo }: Deps): BillingService["summary"] => (organizationId) =>
  Effect.gen(function*() {
    const account = yield* repo.account(organizationId)
    const transactions = yield* repo.transactions(organizationId, 50)
    const settings = yield* repo.settings(organizationId)
    const balance = account?.balance_micros ?? 0
    const reserved = account?.reserved_micros ?? 0
    return {
      organization_id: organizationId,
      billing_enabled: account?.billing_enabled ?? false,
      balance_micros: balance,
      reserved_micros: reserved,
      available_micros: balance - reserved,
      auto_recharge: autoRechargeView(settings),
      transactions: transactions.map((row) => ({
        id: row.id,
        kind: row.kind,
        amount_micros: row.amount_micros,
        description: row.description,
        created_at: formatTimestamp(row.created_at)
      }))
    }
  })

const checkout = ({ base, processor, repo }: Deps): BillingService["checkout"] => (organizationId, amountMicros) =>
  Effect.gen(function*() {
    yield* checkAmount(PurchaseAmount, amountMicros)
    const id = `chk_${newTransactionId().slice(4)}`
    const expiresAt = new Date(Date.now() + CheckoutLifetimeMs)
    const settings = yield* repo.settings(organizationId)
    const email = yield* repo.ownerEmail(organizationId)
    yield* repo.insertCheckout({ id, organizationId, amountMicros, processor: processor.name, expiresAt })
    const session = yield* processor.createCheckout({
      checkoutId: id,
      organizationId,
      amountMicros,
      customerId: settings.processor_customer_id,
      customerEmail: email,
      successUrl: `${base}/billing/return?checkout_id=${id}&result=paid`,
      cancelUrl: `${base}/billing/return?checkout_id=${id}&result=cancelled`,
      expiresAt
    }).pipe(Effect.catch(processorFailure))
    yield* repo.setCheckoutSession(id, session.processorRef, session.url)
    return { checkout_id: id, checkout_url: session.url, amount_micros: amountMicros, expires_at: formatTimestamp(expiresAt) }
  })

const portal = ({ base, processor, repo }: Deps): BillingService["portal"] => (organizationId) =>
  Effect.gen(function*() {
    const settings = yield* repo.settings(organizationId)
    const email = yield* repo.ownerEmail(organizationId)
    const portal = yield* processor.createPortal({
      organizationId,
      customerId: settings.processor_customer_id,
      customerEmail: email,
      returnUrl: base
    }).pipe(Effect.catch(processorFailure))
    if (portal.customerId !== null && portal.customerId !== settings.processor_customer_id) {
      yield* repo.saveCustomer(organizationId, portal.customerId, null)
    }
    return { portal_url: portal.url }
  })

const setAutoRecharge = ({ repo }: Deps): BillingService["setAutoRecharge"] => (organizationId, input) =>
  Effect.gen(function*() {
    yield* checkAmount(RechargeThreshold, input.threshold_micros)
    yield* checkAmount(RechargeAmount, input.amount_micros)
    if (input.enabled) {
      const settings = yield* repo.settings(organizationId)
      if (settings.payment_method_id === null) {
        return yield* new PaymentMethodRequired({
          message: "save a payment method first: buy credit once through a checkout"
        })
      }
    }
    const saved = yield* repo.setAutoRecharge(organizationId, {
      enabled: input.enabled,
      thresholdMicros: input.threshold_micros,
      amountMicros: input.amount_micros
    })
    return autoRechargeView(saved)
  })

const handleWebhook = (deps: Deps): BillingService["handleWebhook"] => {
  const complete = completeCheckout(deps)
  return (rawBody, signature) =>
    Effect.gen(function*() {
      const event = yield* deps.processor.parseWebhook(rawBody, signature)
      if (event.kind !== "checkout_completed") {
        yield* deps.repo.recordEvent(event.eventId, event.kind)
        return { received: true, credited: false }
      }
      const credited = yield* complete(event, { brand: null, last4: null }, deps.processor.name)
      return { received: true, credited }
    })
}

const make = Effect.gen(function*() {
  const deps: Deps = {
    repo: yield* BillingRepo,
    processor: yield* PaymentProcessor,
    base: AppConfig.publicBaseUrl(yield* AppConfig)
  }
  return Billing.of({
    summary: summary(deps),
    checkout: checkout(deps),
    portal: portal(deps),
    setAutoRecharge: setAutoRecharge(deps),
    completeCheckout: completeCheckout(deps),
    handleWebhook: handleWebhook(deps)
  })
})

/** The billing service. */
export class Billing extends Context.Service<Billing, BillingService>()("Billing") {
  /** Billing over its repository and the payment processor. */
  static readonly layer = Layer.effect(Billing, make)
}
