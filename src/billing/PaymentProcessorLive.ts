/**
 * The payment processor chosen by `BILLING_PROVIDER`: the built-in `local` processor (its pages served by this
 * service under `PUBLIC_BASE_URL`, portal links signed with `LOCAL_BILLING_SIGNING_KEY` or, unset, a key made at
 * start) or Stripe through its official SDK (`STRIPE_API_URL` points the SDK at a stand-in).
 */
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { AppConfig } from "../config/AppConfig.js"
import { LocalProcessor } from "./LocalProcessor.js"
import { StripeProcessor } from "./StripeProcessor.js"

/** The key that signs the local processor's portal links (shared by the processor and the portal page). */
export class LocalSigningKey extends Context.Service<LocalSigningKey, Redacted.Redacted>()("LocalSigningKey") {
  /** `LOCAL_BILLING_SIGNING_KEY`, or a random key for the life of the process. */
  static readonly layer = Layer.effect(
    LocalSigningKey,
    Effect.map(AppConfig, (config) =>
      Option.getOrElse(config.localBillingSigningKey, () => Redacted.make(randomBytes(32).toString("hex"))))
  )
}

/**
 * The local processor grants credit to whoever holds a checkout link, with no payment: on the embedded database (a
 * development install) it is the default; on PostgreSQL (a deployment) it runs only when `BILLING_PROVIDER=local` is
 * set explicitly, and then with a warning at every start.
 */
const checkLocalOnPostgres = (config: AppConfig["Service"]) =>
  Option.isNone(config.databaseUrl)
    ? Effect.void
    : config.billingProviderChosen
    ? Effect.logWarning(
      "BILLING_PROVIDER=local on PostgreSQL: the local payment processor adds credit without any payment to whoever " +
        "opens a checkout link; it is for development and demos. Use BILLING_PROVIDER=stripe in production."
    )
    : Effect.die(
      new Error(
        "BILLING_PROVIDER is not set: on PostgreSQL choose the payment processor explicitly, BILLING_PROVIDER=stripe " +
          "(with STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET), or BILLING_PROVIDER=local for a development deployment " +
          "(its checkout page adds credit without payment)"
      )
    )

/** The configured processor. */
export const PaymentProcessorLive = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (config.billingProvider === "local") {
      yield* checkLocalOnPostgres(config)
      return LocalProcessor.layer({
        publicBaseUrl: AppConfig.publicBaseUrl(config),
        signingKey: yield* LocalSigningKey
      })
    }
    const api = Option.map(config.stripeApiUrl, (url) => new URL(url))
    return StripeProcessor.layer({
      secretKey: Option.getOrThrow(config.stripeSecretKey),
      webhookSecret: Option.getOrThrow(config.stripeWebhookSecret),
      ...Option.match(api, {
        onNone: () => ({}),
        onSome: (url) => ({
          apiHost: url.hostname,
          apiPort: Number(url.port || (url.protocol === "http:" ? 80 : 443)),
          apiProtocol: url.protocol === "http:" ? "http" as const : "https" as const
        })
      })
    })
  })
)
