/**
 * The `local` PaymentProcessor (the default), for development and demos: no network, no card, no money. Its
 * checkout page and portal are served by this service under `PUBLIC_BASE_URL` (LocalPages renders them); paying
 * is pressing the page's button, which the billing routes turn into credit. Portal links carry a signed token,
 * `base64url(organization id) "." expiry (Unix seconds) "." base64url(HMAC-SHA256)`, the HMAC keyed by
 * `signingKey` over a version label, the organization id and the expiry: unguessable without the key, expiring,
 * and checked in constant time. Checkout links carry `?token=` + base64url(HMAC-SHA256) of the checkout id under the
 * same key, so a checkout id alone (seen in an API response, a log or a receipt) opens and pays nothing: the page and
 * its pay button (a form posting back to the same tokened URL) need the token. Off-session charges of an `lpm_` payment method always succeed, and a repeated
 * idempotency key returns the first outcome (remembered in memory for the last 10,000 keys), as Stripe's would.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { Clock, Data, Effect, Result, Layer, Redacted } from "effect"
import { InvalidWebhook, PaymentProcessor, ProcessorFailure } from "./PaymentProcessor.js"
import type { ChargeOutcome, OffSessionCharge } from "./PaymentProcessor.js"

/** Where the local pages live and how portal links are signed. */
export interface LocalProcessorOptions {
  /** The service's public root (`PUBLIC_BASE_URL`), e.g. `http://localhost:8080`. */
  readonly publicBaseUrl: string
  /** The HMAC key of portal tokens. */
  readonly signingKey: Redacted.Redacted
  /** How long a portal link stays valid (default 3,600 seconds). */
  readonly portalTokenTtlSeconds?: number
}

/** See `LocalProcessorOptions.portalTokenTtlSeconds`. */
export const DEFAULT_PORTAL_TOKEN_TTL_SECONDS = 3_600

const REMEMBERED_CHARGES = 10_000
const TOKEN_LABEL = "arbiter-local-portal-v1"
const CHECKOUT_TOKEN_LABEL = "arbiter-local-checkout-v1"

/** The token of a local checkout link: base64url of the HMAC of the checkout id under the signing key. */
export const checkoutToken = (checkoutId: string, key: Redacted.Redacted): string =>
  createHmac("sha256", Redacted.value(key)).update(`${CHECKOUT_TOKEN_LABEL}\n${checkoutId}`, "utf8").digest("base64url")

/** Whether `token` is the checkout's link token (compared in constant time). */
export const verifyCheckoutToken = (checkoutId: string, token: string, key: Redacted.Redacted): boolean => {
  const expected = Buffer.from(checkoutToken(checkoutId, key), "utf8")
  const given = Buffer.from(token, "utf8")
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** A portal token that is malformed, not signed by the key, or past its expiry. */
export class InvalidPortalToken extends Data.TaggedError("InvalidPortalToken")<{
  readonly reason: "malformed" | "bad_signature" | "expired"
  readonly message: string
}> {}

const digest = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex")

/** The stable local customer id of an organization: `lcus_` + 24 hex of a SHA-256 of its id. */
export const localCustomerId = (organizationId: string): string => `lcus_${digest(`customer\n${organizationId}`).slice(0, 24)}`

/** The stable local "saved card" of an organization: `lpm_` + 24 hex of a SHA-256 of its id. */
export const localPaymentMethodId = (organizationId: string): string =>
  `lpm_${digest(`payment_method\n${organizationId}`).slice(0, 24)}`

const mac = (organizationId: string, expirySeconds: number, key: Redacted.Redacted): Buffer =>
  createHmac("sha256", Redacted.value(key)).update(`${TOKEN_LABEL}\n${organizationId}\n${expirySeconds}`, "utf8").digest()

/** A portal token for the organization, valid until `expiresAt` (rounded down to the second). */
export const signPortalToken = (organizationId: string, expiresAt: Date, key: Redacted.Redacted): string => {
  const expirySeconds = Math.floor(expiresAt.getTime() / 1000)
  const id = Buffer.from(organizationId, "utf8").toString("base64url")
  return `${id}.${expirySeconds}.${mac(organizationId, expirySeconds, key).toString("base64url")}`
}

/** The organization id a portal token was signed for, if its signature holds and `now` is before its expiry. */
export const verifyPortalToken = (
  token: string,
  key: Redacted.Redacted,
  now: Date
): Result.Result<string, InvalidPortalToken> => {
  const parts = token.split(".")
  const [id, expiry, signature] = parts
  if (
    parts.length !== 3 || id === undefined || expiry === undefined || signature === undefined ||
    !/^[A-Za-z0-9_-]+$/.test(id) || !/^[0-9]{1,12}$/.test(expiry) || !/^[A-Za-z0-9_-]{43}$/.test(signature)
  ) return Result.fail(new InvalidPortalToken({ reason: "malformed", message: "the portal link is malformed" }))
  const organizationId = Buffer.from(id, "base64url").toString("utf8")
  const expirySeconds = Number(expiry)
  const given = Buffer.from(signature, "base64url")
  const expected = mac(organizationId, expirySeconds, key)
  // The last of 43 base64url characters carries 4 bits of the MAC and 2 unused ones: only the canonical spelling
  // (unused bits zero, as signed) is accepted, so a link with its last character changed never still works.
  if (
    Buffer.from(organizationId, "utf8").toString("base64url") !== id || given.toString("base64url") !== signature ||
    given.length !== expected.length || !timingSafeEqual(given, expected)
  ) return Result.fail(new InvalidPortalToken({ reason: "bad_signature", message: "the portal link is not valid" }))
  if (now.getTime() >= expirySeconds * 1000) {
    return Result.fail(new InvalidPortalToken({ reason: "expired", message: "the portal link has expired" }))
  }
  return Result.succeed(organizationId)
}

const make = (options: LocalProcessorOptions) =>
  Effect.sync(() => {
    const base = options.publicBaseUrl.replace(/\/+$/, "")
    const ttlSeconds = options.portalTokenTtlSeconds ?? DEFAULT_PORTAL_TOKEN_TTL_SECONDS
    const charges = new Map<string, ChargeOutcome>()

    const charge = (request: OffSessionCharge): ChargeOutcome => {
      const known = charges.get(request.idempotencyKey)
      if (known !== undefined) return known
      const outcome: ChargeOutcome = request.paymentMethodId.startsWith("lpm_")
        ? { status: "succeeded", processorRef: `lpi_${randomBytes(16).toString("hex")}` }
        : { status: "failed", processorRef: null, reason: "unknown_payment_method" }
      charges.set(request.idempotencyKey, outcome)
      if (charges.size > REMEMBERED_CHARGES) {
        const oldest = charges.keys().next()
        if (oldest.done !== true) charges.delete(oldest.value)
      }
      return outcome
    }

    return PaymentProcessor.of({
      name: "local",
      createCheckout: (request) =>
        Effect.succeed({
          url: `${base}/billing/local/checkout/${encodeURIComponent(request.checkoutId)}?token=${
            checkoutToken(request.checkoutId, options.signingKey)
          }`,
          processorRef: request.checkoutId,
          customerId: request.customerId ?? localCustomerId(request.organizationId)
        }),
      createPortal: (request) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          const token = signPortalToken(request.organizationId, new Date(now + ttlSeconds * 1000), options.signingKey)
          return {
            url: `${base}/billing/local/portal/${token}`,
            customerId: request.customerId ?? localCustomerId(request.organizationId)
          }
        }),
      chargeOffSession: (request) =>
        Number.isSafeInteger(request.amountMicros) && request.amountMicros > 0
          ? Effect.sync(() => charge(request))
          : Effect.fail(new ProcessorFailure({ message: `${request.amountMicros} micro-USD is not a positive amount` })),
      parseWebhook: () => Effect.fail(new InvalidWebhook({ message: "the local processor has no webhooks" }))
    })
  })

/** The local processor: `LocalProcessor.layer(options)` provides `PaymentProcessor` with no network. */
export const LocalProcessor = {
  make,
  layer: (options: LocalProcessorOptions): Layer.Layer<PaymentProcessor> => Layer.effect(PaymentProcessor, make(options))
}
