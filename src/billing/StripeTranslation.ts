/**
 * Translation between billing's requests and Stripe's API objects, with no I/O, so every rule is unit-testable:
 * micro-USD to cents (only whole cents are payable), the Checkout Session parameters, the idempotency keys, the
 * outcome of an off-session PaymentIntent or of the error Stripe answered instead, and the mapping of a verified
 * event to a `ProcessorEvent`. A checkout is recognised as ours by its `chk_` id in `client_reference_id` (or
 * `metadata.checkout_id`); a paid session that is not ours, lacks an amount or is in another currency is `ignored`.
 */
import { createHash } from "node:crypto"
import { Result } from "effect"
import Stripe from "stripe"
import { ProcessorFailure } from "./PaymentProcessor.js"
import type { ChargeOutcome, CheckoutRequest, OffSessionCharge, PortalRequest, ProcessorEvent } from "./PaymentProcessor.js"

/** Micro-USD in one cent (spec: 10,000 = 1 cent). */
export const MICROS_PER_CENT = 10_000

/** Stripe accepts a Checkout Session `expires_at` from 30 minutes to 24 hours after creation. */
export const STRIPE_CHECKOUT_MIN_LIFETIME_MS = 30 * 60_000
/** See `STRIPE_CHECKOUT_MIN_LIFETIME_MS`. */
export const STRIPE_CHECKOUT_MAX_LIFETIME_MS = 24 * 60 * 60_000
/** Kept from both bounds, so clock skew between us and Stripe cannot push a clamped value out of range. */
export const STRIPE_EXPIRY_MARGIN_MS = 2 * 60_000

/** The name on the single line item of a checkout. */
export const CREDIT_PRODUCT_NAME = "Arbiter prepaid credit"

const CHECKOUT_ID = /^chk_[0-9a-fA-F]{32}$/

/** A request body for the SDK together with the idempotency key it is sent under. */
export interface Keyed<P> {
  readonly params: P
  readonly idempotencyKey: string
}

/** An event translated; when `paymentIntentId` is set, the payment method is read from that PaymentIntent. */
export interface TranslatedEvent {
  readonly event: ProcessorEvent
  readonly paymentIntentId: string | null
}

/** The amount in cents, refusing anything that is not a positive whole number of cents. */
export const centsOf = (amountMicros: number): Result.Result<number, ProcessorFailure> =>
  Number.isSafeInteger(amountMicros) && amountMicros > 0 && amountMicros % MICROS_PER_CENT === 0
    ? Result.succeed(amountMicros / MICROS_PER_CENT)
    : Result.fail(new ProcessorFailure({ message: `${amountMicros} micro-USD is not a positive whole number of cents` }))

/**
 * The session's `expires_at` in Unix seconds: the caller's expiry clamped into Stripe's window. A checkout asked to
 * expire in under 30 minutes therefore stays payable at Stripe for about 30 minutes, so a paid webhook can arrive
 * after our own record expired; the payment is real and should still be credited.
 */
export const stripeExpiresAt = (expiresAt: Date, nowMs: number): number => {
  const earliest = nowMs + STRIPE_CHECKOUT_MIN_LIFETIME_MS + STRIPE_EXPIRY_MARGIN_MS
  const latest = nowMs + STRIPE_CHECKOUT_MAX_LIFETIME_MS - STRIPE_EXPIRY_MARGIN_MS
  return Math.floor(Math.min(latest, Math.max(earliest, expiresAt.getTime())) / 1000)
}

const dollars = (cents: number): string => `$${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`

/** The Checkout Session of a purchase: one line item, a receipt invoice, and the card saved for auto-recharge. */
export const checkoutParams = (
  request: CheckoutRequest,
  options: { readonly currency: string; readonly nowMs: number }
): Result.Result<Keyed<Stripe.Checkout.SessionCreateParams>, ProcessorFailure> =>
  Result.map(centsOf(request.amountMicros), (cents) => {
    const metadata = { checkout_id: request.checkoutId, organization_id: request.organizationId }
    const customer: Stripe.Checkout.SessionCreateParams = request.customerId !== null
      ? { customer: request.customerId }
      : {
        customer_creation: "always",
        ...(request.customerEmail !== null ? { customer_email: request.customerEmail } : {})
      }
    return {
      idempotencyKey: `arbiter-checkout-${request.checkoutId}`,
      params: {
        mode: "payment",
        line_items: [{
          quantity: 1,
          price_data: {
            currency: options.currency,
            unit_amount: cents,
            product_data: { name: CREDIT_PRODUCT_NAME, description: `${dollars(cents)} of prepaid API credit` }
          }
        }],
        invoice_creation: { enabled: true },
        ...customer,
        payment_intent_data: { setup_future_usage: "off_session", metadata },
        client_reference_id: request.checkoutId,
        metadata,
        expires_at: stripeExpiresAt(request.expiresAt, options.nowMs),
        success_url: request.successUrl,
        cancel_url: request.cancelUrl
      }
    }
  })

/**
 * The customer created for an organization that has none; the key makes retries (within Stripe's 24 hours of
 * idempotency) return the same customer, and changes with the e-mail so a changed address is no key conflict.
 */
export const customerParams = (request: PortalRequest): Keyed<Stripe.CustomerCreateParams> => ({
  idempotencyKey: `arbiter-customer-${
    createHash("sha256").update(`${request.organizationId}\n${request.customerEmail ?? ""}`).digest("hex").slice(0, 40)
  }`,
  params: {
    ...(request.customerEmail !== null ? { email: request.customerEmail } : {}),
    description: `Arbiter organization ${request.organizationId}`,
    metadata: { organization_id: request.organizationId }
  }
})

/** The billing portal session of a customer. */
export const portalParams = (customerId: string, returnUrl: string): Stripe.BillingPortal.SessionCreateParams => ({
  customer: customerId,
  return_url: returnUrl
})

/** The confirmed off-session PaymentIntent of an auto-recharge, under the caller's idempotency key. */
export const offSessionParams = (
  charge: OffSessionCharge,
  currency: string
): Result.Result<Keyed<Stripe.PaymentIntentCreateParams>, ProcessorFailure> =>
  Result.map(centsOf(charge.amountMicros), (cents) => ({
    idempotencyKey: charge.idempotencyKey,
    params: {
      amount: cents,
      currency,
      customer: charge.customerId,
      payment_method: charge.paymentMethodId,
      off_session: true,
      confirm: true,
      description: "Arbiter credit auto-recharge",
      metadata: { organization_id: charge.organizationId, purpose: "auto_recharge" }
    }
  }))

/** Why a request to Stripe failed, as a ProcessorFailure whose message names the operation and Stripe's code. */
export const failureOf = (operation: string, error: unknown): ProcessorFailure => {
  if (error instanceof Stripe.errors.StripeError) {
    const status = error.statusCode === undefined ? "" : ` ${error.statusCode}`
    const code = error.code === undefined ? "" : ` ${error.code}`
    return new ProcessorFailure({ message: `${operation}: ${error.type}${status}${code}: ${error.message}`, cause: error })
  }
  return new ProcessorFailure({ message: `${operation}: ${error instanceof Error ? error.message : String(error)}`, cause: error })
}

/**
 * The outcome of a PaymentIntent Stripe answered with 200. `processing` is a ProcessorFailure, not `failed`: the
 * money may still arrive, so nothing final may be recorded (cards do not normally pass through it).
 */
export const outcomeOfIntent = (intent: Stripe.PaymentIntent): Result.Result<ChargeOutcome, ProcessorFailure> => {
  switch (intent.status) {
    case "succeeded":
      return Result.succeed({ status: "succeeded", processorRef: intent.id })
    case "requires_action":
      return Result.succeed({ status: "requires_action", processorRef: intent.id, reason: "authentication_required" })
    case "processing":
      return Result.fail(new ProcessorFailure({ message: `payment intent ${intent.id} is still processing` }))
    default: {
      const error = intent.last_payment_error
      const reason = error?.decline_code ?? error?.code ?? `payment intent ${intent.status}`
      return Result.succeed({ status: "failed", processorRef: intent.id, reason })
    }
  }
}

/**
 * The outcome of an off-session charge Stripe refused. A card error asking for authentication is `requires_action`
 * (the customer must be present; never retried off-session); any other card error is `failed` with its decline
 * code; an invalid request (400/404: a detached card, a deleted customer) is `failed` too, since resending it cannot
 * succeed. Authentication, permission, rate-limit, idempotency, API (5xx) and connection errors are ProcessorFailures.
 */
export const outcomeOfError = (error: unknown): Result.Result<ChargeOutcome, ProcessorFailure> => {
  if (error instanceof Stripe.errors.StripeCardError) {
    const intent = error.payment_intent
    const processorRef = intent?.id ?? null
    if (
      error.code === "authentication_required" || error.decline_code === "authentication_required" ||
      intent?.status === "requires_action"
    ) {
      return Result.succeed({ status: "requires_action", processorRef, reason: "authentication_required" })
    }
    const reason = error.decline_code !== "" ? error.decline_code : error.code ?? "card_declined"
    return Result.succeed({ status: "failed", processorRef, reason })
  }
  if (error instanceof Stripe.errors.StripeInvalidRequestError) {
    return Result.succeed({
      status: "failed",
      processorRef: error.payment_intent?.id ?? null,
      reason: `invalid_request: ${error.code ?? error.message}`
    })
  }
  return Result.fail(failureOf("off-session payment intent", error))
}

/** The id of an expandable field (a bare id, an expanded object, or null). */
export const idOf = (field: string | { readonly id: string } | null | undefined): string | null =>
  field === null || field === undefined ? null : typeof field === "string" ? field : field.id

const ourCheckoutId = (session: Stripe.Checkout.Session): string | null => {
  if (session.client_reference_id !== null && CHECKOUT_ID.test(session.client_reference_id)) {
    return session.client_reference_id
  }
  const fromMetadata = session.metadata?.["checkout_id"]
  return fromMetadata !== undefined && CHECKOUT_ID.test(fromMetadata) ? fromMetadata : null
}

/**
 * Maps a verified event: `checkout.session.completed` with `payment_status: "paid"` (and, for delayed payment
 * methods, `checkout.session.async_payment_succeeded`, which Stripe sends instead once the money arrives) becomes
 * `checkout_completed`; everything else is `ignored`.
 */
export const translateEvent = (event: Stripe.Event, currency: string): TranslatedEvent => {
  const ignored: TranslatedEvent = { event: { kind: "ignored", eventId: event.id, type: event.type }, paymentIntentId: null }
  if (event.type !== "checkout.session.completed" && event.type !== "checkout.session.async_payment_succeeded") {
    return ignored
  }
  const session = event.data.object
  const checkoutId = ourCheckoutId(session)
  if (
    session.payment_status !== "paid" || checkoutId === null || session.amount_total === null ||
    session.currency?.toLowerCase() !== currency.toLowerCase()
  ) return ignored
  const intent = session.payment_intent
  const knownMethod = typeof intent === "object" && intent !== null ? idOf(intent.payment_method) : null
  return {
    event: {
      kind: "checkout_completed",
      eventId: event.id,
      checkoutId,
      processorRef: session.id,
      amountMicros: session.amount_total * MICROS_PER_CENT,
      customerId: idOf(session.customer),
      paymentMethodId: knownMethod
    },
    paymentIntentId: typeof intent === "string" ? intent : null
  }
}
