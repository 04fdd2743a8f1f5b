/**
 * The seam between billing and whoever takes the money. Two implementations exist, chosen by `BILLING_PROVIDER`:
 * `local` (LocalProcessor: the service serves its own checkout and portal pages, for development and demos) and
 * `stripe` (StripeProcessor). Amounts are integer micro-USD everywhere on this side of the seam; ids prefixed
 * `chk_` are ours, every other id is the processor's. Crediting is not done here: a processor only reports, through
 * `ProcessorEvent`, that a checkout was paid, and the billing service credits it exactly once.
 */
import { Context, Data, Effect } from "effect"

/** A purchase of credit for which the processor hosts a payment page. */
export interface CheckoutRequest {
  /** Our checkout id, `chk_` + 32 hex; the processor echoes it back when the payment completes. */
  readonly checkoutId: string
  readonly organizationId: string
  /** The credit bought, in micro-USD (spec: 5 to 1,000 US dollars). */
  readonly amountMicros: number
  /** The processor's customer of the organization, when one is already known. */
  readonly customerId: string | null
  /** The e-mail address a new processor customer is created with. */
  readonly customerEmail: string | null
  /** Where the payer lands after paying. */
  readonly successUrl: string
  /** Where the payer lands after giving up. */
  readonly cancelUrl: string
  /** When the page stops accepting payment (a processor may clamp it to its own bounds). */
  readonly expiresAt: Date
}

/** The hosted page of a checkout. */
export interface CheckoutSession {
  /** The page the payer is sent to. */
  readonly url: string
  /** The processor's reference of the session, e.g. Stripe `cs_...`. */
  readonly processorRef: string
  /** The processor's customer, when the processor knows it at creation. */
  readonly customerId: string | null
}

/** A request for the hosted billing portal (saved cards, receipts) of an organization. */
export interface PortalRequest {
  readonly organizationId: string
  /** The processor's customer of the organization, when one is already known. */
  readonly customerId: string | null
  /** The e-mail address a new processor customer is created with. */
  readonly customerEmail: string | null
  /** Where the portal's "back" link leads. */
  readonly returnUrl: string
}

/** A charge of a saved payment method without the customer present (auto-recharge). */
export interface OffSessionCharge {
  readonly organizationId: string
  readonly customerId: string
  readonly paymentMethodId: string
  /** The credit bought, in micro-USD. */
  readonly amountMicros: number
  /** Sent to the processor so that a retried charge is never taken twice. */
  readonly idempotencyKey: string
}

/**
 * How an off-session charge ended: `succeeded` (credit it), `requires_action` (the bank wants the customer present:
 * never retry off-session) or `failed` (declined or refused for good).
 */
export type ChargeOutcome =
  | { readonly status: "succeeded"; readonly processorRef: string }
  | { readonly status: "requires_action" | "failed"; readonly processorRef: string | null; readonly reason: string }

/** A verified processor notification: a paid checkout, or anything billing does not act on. */
export type ProcessorEvent =
  | {
    readonly kind: "checkout_completed"
    /** The processor's event id (for de-duplication of redeliveries). */
    readonly eventId: string
    /** Our `chk_` id the payment belongs to. */
    readonly checkoutId: string
    readonly processorRef: string
    /** The amount actually paid, in micro-USD. */
    readonly amountMicros: number
    readonly customerId: string | null
    /** The card saved for later off-session charges, when the processor reports one. */
    readonly paymentMethodId: string | null
  }
  | { readonly kind: "ignored"; readonly eventId: string; readonly type: string }

/** The processor could not be reached or refused the request for a reason other than the card (a 503 upstream). */
export class ProcessorFailure extends Data.TaggedError("ProcessorFailure")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/** A webhook whose signature is missing or wrong, or whose body is not an event (answer 400, never credit). */
export class InvalidWebhook extends Data.TaggedError("InvalidWebhook")<{ readonly message: string }> {}

/** The payment processor billing talks to, `local` or `stripe`. */
export class PaymentProcessor extends Context.Service<PaymentProcessor, {
  /** Which implementation this is. */
  readonly name: "local" | "stripe"
  /** Creates the hosted payment page of a checkout. */
  readonly createCheckout: (request: CheckoutRequest) => Effect.Effect<CheckoutSession, ProcessorFailure>
  /** Creates a billing portal session, creating the processor's customer first when none is known. */
  readonly createPortal: (
    request: PortalRequest
  ) => Effect.Effect<{ readonly url: string; readonly customerId: string | null }, ProcessorFailure>
  /** Charges a saved payment method without the customer, idempotently under the charge's key. */
  readonly chargeOffSession: (charge: OffSessionCharge) => Effect.Effect<ChargeOutcome, ProcessorFailure>
  /** Verifies a webhook's signature over its raw body and translates the event. */
  readonly parseWebhook: (
    rawBody: string,
    signatureHeader: string | undefined
  ) => Effect.Effect<ProcessorEvent, InvalidWebhook>
}>()("PaymentProcessor") {}
