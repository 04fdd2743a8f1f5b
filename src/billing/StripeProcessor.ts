/**
 * The `stripe` PaymentProcessor: the transport only (the official SDK's client, its host, timeout and network
 * retries, spans); every parameter and every mapping is StripeTranslation's. The SDK retries connection errors,
 * 409s and 5xx with backoff, reusing one idempotency key per call, so a retried POST is never executed twice.
 * A completed checkout's webhook carries only the PaymentIntent's id, so the saved card is read with one extra
 * `GET /v1/payment_intents/:id`; when that read fails the event is still returned (the payment is confirmed and
 * must be credited) with `paymentMethodId: null`, and a warning is logged.
 */
import { Clock, Effect, Layer, Redacted } from "effect"
import Stripe from "stripe"
import { InvalidWebhook, PaymentProcessor } from "./PaymentProcessor.js"
import type { ChargeOutcome, CheckoutRequest, OffSessionCharge, PortalRequest, ProcessorEvent } from "./PaymentProcessor.js"
import {
  checkoutParams,
  customerParams,
  failureOf,
  idOf,
  offSessionParams,
  outcomeOfError,
  outcomeOfIntent,
  portalParams,
  translateEvent
} from "./StripeTranslation.js"
import { annotateSpan } from "../telemetry/Spans.js"
import { unstorableIn } from "../db/StorableText.js"

/** How the adapter reaches Stripe; `apiHost`, `apiPort` and `apiProtocol` point it at a stand-in in tests. */
export interface StripeProcessorOptions {
  readonly secretKey: Redacted.Redacted
  readonly webhookSecret: Redacted.Redacted
  readonly apiHost?: string
  readonly apiPort?: number
  readonly apiProtocol?: "http" | "https"
  /** ISO currency of every amount (default `usd`: credit is sold in US dollars). */
  readonly currency?: string
  /** Longest single HTTP attempt (default 20,000 ms; the SDK's own default of 80 s outlasts any caller). */
  readonly timeoutMs?: number
  /** Retries the SDK makes after a failed attempt (default 2). */
  readonly maxNetworkRetries?: number
}

/** See `StripeProcessorOptions.timeoutMs`. */
export const DEFAULT_TIMEOUT_MS = 20_000
/** See `StripeProcessorOptions.maxNetworkRetries`. */
export const DEFAULT_MAX_NETWORK_RETRIES = 2

/** A Stripe SDK client configured from the options (no request is made). */
export const stripeClient = (options: StripeProcessorOptions): Stripe =>
  new Stripe(Redacted.value(options.secretKey), {
    timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxNetworkRetries: options.maxNetworkRetries ?? DEFAULT_MAX_NETWORK_RETRIES,
    telemetry: false,
    appInfo: { name: "arbiter" },
    ...(options.apiHost !== undefined ? { host: options.apiHost } : {}),
    ...(options.apiPort !== undefined ? { port: options.apiPort } : {}),
    ...(options.apiProtocol !== undefined ? { protocol: options.apiProtocol } : {})
  })

/**
 * How far a webhook signature's timestamp may be from our clock, in either direction (Stripe's SDK checks only the
 * past: a timestamp in the future would be accepted by it).
 */
export const WEBHOOK_TOLERANCE_SECONDS = 300

/** The `t=` timestamp (Unix seconds) of a `Stripe-Signature` header, or null when it has none. */
const signatureTimestamp = (header: string): number | null => {
  const match = /(?:^|,)\s*t=([0-9]{1,12})\s*(?:,|$)/.exec(header)
  return match === null ? null : Number(match[1])
}

/** The client and settings every call below uses. */
interface Transport {
  readonly stripe: Stripe
  readonly currency: string
  readonly webhookSecret: Redacted.Redacted
}

const call = <A>(operation: string, request: () => Promise<A>) =>
  Effect.tryPromise({ try: request, catch: (error) => failureOf(operation, error) })

const paymentMethodOf = ({ stripe }: Transport, paymentIntentId: string): Effect.Effect<string | null> =>
  call("payment intent", () => stripe.paymentIntents.retrieve(paymentIntentId)).pipe(
    Effect.map((intent) => idOf(intent.payment_method)),
    Effect.catch((failure) =>
      Effect.as(Effect.logWarning("paid checkout reported without its payment method", paymentIntentId, failure.message), null)
    )
  )

const createCustomer = ({ stripe }: Transport, request: PortalRequest) => {
  const { idempotencyKey, params } = customerParams(request)
  return Effect.map(call("customer", () => stripe.customers.create(params, { idempotencyKey })), (customer) => customer.id)
}

const createCheckout = ({ currency, stripe }: Transport, request: CheckoutRequest) =>
  Effect.gen(function*() {
    const nowMs = yield* Clock.currentTimeMillis
    const { idempotencyKey, params } = yield* Effect.fromResult(checkoutParams(request, { currency, nowMs }))
    const session = yield* call("checkout session", () => stripe.checkout.sessions.create(params, { idempotencyKey }))
    if (session.url === null) {
      return yield* failureOf("checkout session", new Error(`session ${session.id} has no hosted url`))
    }
    return { url: session.url, processorRef: session.id, customerId: idOf(session.customer) }
  }).pipe(Effect.withSpan("StripeProcessor.createCheckout", {
    attributes: { "billing.checkout_id": request.checkoutId, "billing.amount_micros": request.amountMicros }
  }))

const createPortal = (transport: Transport, request: PortalRequest) =>
  Effect.gen(function*() {
    const customerId = request.customerId ?? (yield* createCustomer(transport, request))
    const session = yield* call(
      "billing portal session",
      () => transport.stripe.billingPortal.sessions.create(portalParams(customerId, request.returnUrl))
    )
    return { url: session.url, customerId }
  }).pipe(Effect.withSpan("StripeProcessor.createPortal", {
    attributes: { "billing.organization_id": request.organizationId }
  }))

const chargeOffSession = ({ currency, stripe }: Transport, charge: OffSessionCharge) =>
  Effect.gen(function*() {
    const { idempotencyKey, params } = yield* Effect.fromResult(offSessionParams(charge, currency))
    const answer = yield* Effect.result(Effect.tryPromise({
      try: () => stripe.paymentIntents.create(params, { idempotencyKey }),
      catch: (error) => error
    }))
    const outcome: ChargeOutcome = answer._tag === "Success"
      ? yield* Effect.fromResult(outcomeOfIntent(answer.success))
      : yield* Effect.fromResult(outcomeOfError(answer.failure))
    yield* annotateSpan({ "billing.charge_status": outcome.status })
    return outcome
  }).pipe(Effect.withSpan("StripeProcessor.chargeOffSession", {
    attributes: { "billing.organization_id": charge.organizationId, "billing.amount_micros": charge.amountMicros }
  }))

/** The longest event id stored (Stripe's are some 30 characters). */
export const MaxEventIdLength = 255

/**
 * Why a correctly signed body is not an event the service can record (decisions.md, Precise rules: answered `400`,
 * never 5xx, nothing credited), or undefined: not an object, no string `id` and `type`, an `id` longer than
 * `MaxEventIdLength` characters, or text anywhere that PostgreSQL cannot store.
 */
export const malformedEvent = (event: unknown): string | undefined => {
  if (typeof event !== "object" || event === null || Array.isArray(event)) return "the webhook body is not an object"
  const { id, type } = event as { readonly id?: unknown; readonly type?: unknown }
  if (typeof id !== "string" || id === "") return "the event has no id"
  if (id.length > MaxEventIdLength) return `the event id is longer than ${MaxEventIdLength} characters`
  if (typeof type !== "string") return "the event has no type"
  const unstorable = unstorableIn(event)
  return unstorable === undefined ? undefined : `the event holds ${unstorable}, which cannot be stored`
}

/** The event a signed body carries, verified with the SDK at `now` (Unix milliseconds), or why it is refused. */
const verifiedEvent = ({ currency, stripe, webhookSecret }: Transport, rawBody: string, signatureHeader: string, now: number) =>
  Effect.flatMap(
    Effect.try({
      try: () =>
        stripe.webhooks.constructEvent(
          rawBody,
          signatureHeader,
          Redacted.value(webhookSecret),
          WEBHOOK_TOLERANCE_SECONDS,
          undefined,
          Math.floor(now / 1000)
        ) as unknown,
      catch: (error) =>
        new InvalidWebhook({
          message: error instanceof Stripe.errors.StripeSignatureVerificationError
            ? `signature verification failed: ${error.message}`
            : "the webhook body is not a Stripe event"
        })
    }),
    (event) => {
      const malformed = malformedEvent(event)
      if (malformed !== undefined) return Effect.fail(new InvalidWebhook({ message: malformed }))
      return Effect.try({
        try: () => translateEvent(event as Stripe.Event, currency),
        catch: () => new InvalidWebhook({ message: "the webhook body is not a Stripe event" })
      })
    }
  )

const parseWebhook = (transport: Transport, rawBody: string, signatureHeader: string | undefined) =>
  Effect.gen(function*() {
    if (signatureHeader === undefined || signatureHeader.trim() === "") {
      return yield* new InvalidWebhook({ message: "the Stripe-Signature header is missing" })
    }
    const now = yield* Clock.currentTimeMillis
    const signedAt = signatureTimestamp(signatureHeader)
    if (signedAt === null || Math.abs(now / 1000 - signedAt) > WEBHOOK_TOLERANCE_SECONDS) {
      return yield* new InvalidWebhook({
        message: `signature verification failed: the signature's timestamp is missing or more than ` +
          `${WEBHOOK_TOLERANCE_SECONDS} seconds from now`
      })
    }
    const translated = yield* verifiedEvent(transport, rawBody, signatureHeader, now)
    if (translated.event.kind !== "checkout_completed" || translated.paymentIntentId === null) {
      return translated.event
    }
    const paymentMethodId = yield* paymentMethodOf(transport, translated.paymentIntentId)
    const completed: ProcessorEvent = { ...translated.event, paymentMethodId }
    return completed
  }).pipe(Effect.withSpan("StripeProcessor.parseWebhook"))

const make = (options: StripeProcessorOptions) =>
  Effect.sync(() => {
    const transport: Transport = {
      stripe: stripeClient(options),
      currency: options.currency ?? "usd",
      webhookSecret: options.webhookSecret
    }
    return PaymentProcessor.of({
      name: "stripe",
      createCheckout: (request) => createCheckout(transport, request),
      createPortal: (request) => createPortal(transport, request),
      chargeOffSession: (charge) => chargeOffSession(transport, charge),
      parseWebhook: (rawBody, signature) => parseWebhook(transport, rawBody, signature)
    })
  })

/** The Stripe processor: `StripeProcessor.layer(options)` provides `PaymentProcessor` through the official SDK. */
export const StripeProcessor = {
  make,
  layer: (options: StripeProcessorOptions): Layer.Layer<PaymentProcessor> => Layer.effect(PaymentProcessor, make(options))
}
