import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer, Redacted, Result } from "effect"
import Stripe from "stripe"
import { PaymentProcessor, ProcessorFailure } from "../../src/billing/PaymentProcessor.js"
import type { CheckoutRequest } from "../../src/billing/PaymentProcessor.js"
import { StripeProcessor } from "../../src/billing/StripeProcessor.js"
import type { StripeProcessorOptions } from "../../src/billing/StripeProcessor.js"
import {
  centsOf,
  checkoutParams,
  outcomeOfError,
  outcomeOfIntent,
  STRIPE_CHECKOUT_MAX_LIFETIME_MS,
  STRIPE_CHECKOUT_MIN_LIFETIME_MS,
  stripeExpiresAt,
  translateEvent
} from "../../src/billing/StripeTranslation.js"
import {
  checkoutCompletedWebhook,
  FAKE_STRIPE_SECRET_KEY,
  FakeStripe,
  signedWebhook,
  stripeEvent
} from "../support/FakeStripe.js"

const CHECKOUT_ID = "chk_0123456789abcdef0123456789abcdef"

const checkoutRequest = (overrides: Partial<CheckoutRequest> = {}): CheckoutRequest => ({
  checkoutId: CHECKOUT_ID,
  organizationId: "org_acme",
  amountMicros: 25_000_000,
  customerId: null,
  customerEmail: "ada@acme.test",
  successUrl: "https://app.arbiter.test/billing?checkout=done",
  cancelUrl: "https://app.arbiter.test/billing?checkout=cancelled",
  expiresAt: new Date(Date.now() + 60 * 60_000),
  ...overrides
})

const charge = (idempotencyKey: string) => ({
  organizationId: "org_acme",
  customerId: "cus_saved",
  paymentMethodId: "pm_saved_card",
  amountMicros: 25_000_000,
  idempotencyKey
})

/** The fake's processor options, and the processor built from them, for one test. */
const processorWith = (overrides: Partial<StripeProcessorOptions> = {}) =>
  Effect.flatMap(FakeStripe, (fake) => StripeProcessor.make(fake.processorOptions(overrides)))

const StripeAgainstFake = Layer.unwrap(
  Effect.map(FakeStripe, (fake) => StripeProcessor.layer(fake.processorOptions()))
).pipe(Layer.provideMerge(FakeStripe.layer))

layer(StripeAgainstFake, { excludeTestServices: true })("StripeProcessor against the fake Stripe", (it) => {
  it.effect("createCheckout: a payment-mode session of 2500 cents that saves the card and creates the customer", () =>
    Effect.gen(function*() {
      const fake = yield* FakeStripe
      yield* fake.reset
      const expiresAt = new Date(Date.now() + 2 * 60 * 60_000)
      const session = yield* (yield* PaymentProcessor).createCheckout(checkoutRequest({ expiresAt }))

      const [request] = yield* fake.requests("POST /v1/checkout/sessions")
      assert.strictEqual(request!.headers["authorization"], `Bearer ${FAKE_STRIPE_SECRET_KEY}`)
      assert.strictEqual(request!.idempotencyKey, `arbiter-checkout-${CHECKOUT_ID}`)
      const body = request!.body
      assert.strictEqual(body.mode, "payment")
      assert.deepStrictEqual(body.line_items, [{
        quantity: "1",
        price_data: {
          currency: "usd",
          unit_amount: "2500",
          product_data: { name: "Arbiter prepaid credit", description: "$25.00 of prepaid API credit" }
        }
      }])
      assert.deepStrictEqual(body.invoice_creation, { enabled: "true" })
      assert.strictEqual(body.customer_creation, "always")
      assert.strictEqual(body.customer_email, "ada@acme.test")
      assert.isUndefined(body.customer)
      assert.strictEqual(body.payment_intent_data.setup_future_usage, "off_session")
      assert.deepStrictEqual(body.payment_intent_data.metadata, { checkout_id: CHECKOUT_ID, organization_id: "org_acme" })
      assert.strictEqual(body.client_reference_id, CHECKOUT_ID)
      assert.deepStrictEqual(body.metadata, { checkout_id: CHECKOUT_ID, organization_id: "org_acme" })
      assert.strictEqual(body.expires_at, String(Math.floor(expiresAt.getTime() / 1000)))
      assert.strictEqual(body.success_url, "https://app.arbiter.test/billing?checkout=done")
      assert.strictEqual(body.cancel_url, "https://app.arbiter.test/billing?checkout=cancelled")

      const [stored] = fake.server.sessions()
      assert.strictEqual(stored!.amount_total, 2500)
      assert.deepStrictEqual(session, { url: stored!.url, processorRef: stored!.id, customerId: null })
      assert.match(session.processorRef, /^cs_test_/)
    }))

  it.effect("createCheckout: a known customer is passed as `customer`, without customer_creation or e-mail", () =>
    Effect.gen(function*() {
      const fake = yield* FakeStripe
      yield* fake.reset
      const customerId = yield* fake.seedCustomer("ada@acme.test")
      const session = yield* (yield* PaymentProcessor).createCheckout(checkoutRequest({ customerId }))
      const [request] = yield* fake.requests("POST /v1/checkout/sessions")
      assert.strictEqual(request!.body.customer, customerId)
      assert.isUndefined(request!.body.customer_creation)
      assert.isUndefined(request!.body.customer_email)
      assert.strictEqual(session.customerId, customerId)
    }))

  it.effect("createCheckout: an expiry outside Stripe's 30 min to 24 h window is clamped into it", () =>
    Effect.gen(function*() {
      const fake = yield* FakeStripe
      yield* fake.reset
      const processor = yield* PaymentProcessor
      const before = Math.floor(Date.now() / 1000)
      yield* processor.createCheckout(checkoutRequest({ expiresAt: new Date(Date.now() + 5 * 60_000) }))
      yield* processor.createCheckout(checkoutRequest({
        checkoutId: "chk_ffffffffffffffffffffffffffffffff",
        expiresAt: new Date(Date.now() + 3 * 24 * 60 * 60_000)
      }))
      const [soon, late] = fake.server.sessions()
      assert.isAtLeast(soon!.expires_at - before, 30 * 60)
      assert.isAtMost(soon!.expires_at - before, 35 * 60)
      assert.isAtLeast(late!.expires_at - before, 23 * 60 * 60)
      assert.isAtMost(late!.expires_at - before, 24 * 60 * 60)
    }))

  it.effect("createCheckout: a retry of the same checkout replays Stripe's session instead of making a second", () =>
    Effect.gen(function*() {
      const fake = yield* FakeStripe
      yield* fake.reset
      const processor = yield* PaymentProcessor
      const request = checkoutRequest()
      const first = yield* processor.createCheckout(request)
      const second = yield* processor.createCheckout(request)
      assert.deepStrictEqual(second, first)
      assert.strictEqual(fake.server.sessions().length, 1)
      assert.strictEqual((yield* fake.requests("POST /v1/checkout/sessions")).length, 2)
    }))

  it.effect("createCheckout: an amount that is not whole cents fails before any request", () =>
    Effect.gen(function*() {
      const fake = yield* FakeStripe
      yield* fake.reset
      const error = yield* Effect.flip((yield* PaymentProcessor).createCheckout(checkoutRequest({ amountMicros: 25_000_001 })))
      assert.instanceOf(error, ProcessorFailure)
      assert.include(error.message, "25000001")
      assert.lengthOf(yield* fake.requests(), 0)
    }))

  it.effect("createPortal: the customer is created once, then the portal session is opened for it", () =>
    Effect.gen(function*() {
      const fake = yield* FakeStripe
      yield* fake.reset
      const processor = yield* PaymentProcessor
      const request = {
        organizationId: "org_acme",
        customerId: null,
        customerEmail: "ada@acme.test",
        returnUrl: "https://app.arbiter.test/billing"
      }
      const portal = yield* processor.createPortal(request)
      const [customer] = fake.server.customers()
      assert.strictEqual(portal.customerId, customer!.id)
      assert.strictEqual(customer!.email, "ada@acme.test")
      assert.deepStrictEqual(customer!.metadata, { organization_id: "org_acme" })
      const [portalRequest] = yield* fake.requests("POST /v1/billing_portal/sessions")
      assert.deepStrictEqual(portalRequest!.body, { customer: customer!.id, return_url: "https://app.arbiter.test/billing" })
      assert.match(portal.url, /^https:\/\/billing\.stripe\.com\/p\/session\/test_/)

      // The caller lost the id (say its write failed) and asks again: the idempotency key finds the same customer.
      const again = yield* processor.createPortal(request)
      assert.strictEqual(again.customerId, customer!.id)
      // Once the id is known, no customer request is made at all.
      const known = yield* processor.createPortal({ ...request, customerId: customer!.id })
      assert.strictEqual(known.customerId, customer!.id)
      assert.lengthOf(fake.server.customers(), 1)
      assert.lengthOf(yield* fake.requests("POST /v1/customers"), 2)
      assert.lengthOf(yield* fake.requests("POST /v1/billing_portal/sessions"), 3)
    }))

  it.effect("chargeOffSession: a confirmed off-session PaymentIntent under the caller's idempotency key", () =>
    Effect.gen(function*() {
      const fake = yield* FakeStripe
      yield* fake.reset
      const outcome = yield* (yield* PaymentProcessor).chargeOffSession(charge("recharge-org_acme-42"))
      const [intent] = fake.server.paymentIntents()
      assert.deepStrictEqual(outcome, { status: "succeeded", processorRef: intent!.id })
      const [request] = yield* fake.requests("POST /v1/payment_intents")
      assert.strictEqual(request!.idempotencyKey, "recharge-org_acme-42")
      assert.strictEqual(request!.body.amount, "2500")
      assert.strictEqual(request!.body.currency, "usd")
      assert.strictEqual(request!.body.customer, "cus_saved")
      assert.strictEqual(request!.body.payment_method, "pm_saved_card")
      assert.strictEqual(request!.body.off_session, "true")
      assert.strictEqual(request!.body.confirm, "true")
    }))

  it.effect("chargeOffSession: the same idempotency key twice charges once and reports the same intent", () =>
    Effect.gen(function*() {
      const fake = yield* FakeStripe
      yield* fake.reset
      const processor = yield* PaymentProcessor
      const first = yield* processor.chargeOffSession(charge("recharge-7"))
      const second = yield* processor.chargeOffSession(charge("recharge-7"))
      assert.deepStrictEqual(second, first)
      assert.lengthOf(fake.server.paymentIntents(), 1)
    }))

  it.effect("chargeOffSession: a 402 authentication_required is requires_action, not retried", () =>
    Effect.gen(function*() {
      const fake = yield* FakeStripe
      yield* fake.reset
      yield* fake.script("POST /v1/payment_intents", { kind: "authentication_required" })
      const outcome = yield* (yield* PaymentProcessor).chargeOffSession(charge("recharge-sca"))
      const [intent] = fake.server.paymentIntents()
      assert.deepStrictEqual(outcome, { status: "requires_action", processorRef: intent!.id, reason: "authentication_required" })
      assert.lengthOf(yield* fake.requests("POST /v1/payment_intents"), 1)
    }))

  it.effect("chargeOffSession: a 200 intent in requires_action is requires_action", () =>
    Effect.gen(function*() {
      const fake = yield* FakeStripe
      yield* fake.reset
      yield* fake.script("POST /v1/payment_intents", { kind: "requires_action" })
      const outcome = yield* (yield* PaymentProcessor).chargeOffSession(charge("recharge-3ds"))
      assert.strictEqual(outcome.status, "requires_action")
      assert.strictEqual(outcome.processorRef, fake.server.paymentIntents()[0]!.id)
    }))

  it.effect("chargeOffSession: a declined card is failed with the decline code", () =>
    Effect.gen(function*() {
      const fake = yield* FakeStripe
      yield* fake.reset
      yield* fake.script("POST /v1/payment_intents", { kind: "decline", declineCode: "insufficient_funds" })
      const outcome = yield* (yield* PaymentProcessor).chargeOffSession(charge("recharge-poor"))
      assert.deepStrictEqual(outcome, {
        status: "failed",
        processorRef: fake.server.paymentIntents()[0]!.id,
        reason: "insufficient_funds"
      })
    }))

  it.effect("chargeOffSession: a 500 on every attempt is a ProcessorFailure after the SDK's retry, one key throughout", () =>
    Effect.gen(function*() {
      const fake = yield* FakeStripe
      yield* fake.reset
      yield* fake.always("POST /v1/payment_intents", { kind: "status", status: 500 })
      const error = yield* Effect.flip((yield* PaymentProcessor).chargeOffSession(charge("recharge-500")))
      assert.instanceOf(error, ProcessorFailure)
      assert.include(error.message, "500")
      const requests = yield* fake.requests("POST /v1/payment_intents")
      assert.deepStrictEqual(requests.map((request) => request.idempotencyKey), ["recharge-500", "recharge-500"])
      assert.lengthOf(fake.server.paymentIntents(), 0)
    }))

  it.effect("chargeOffSession: one 500 then success is retried by the SDK under the same key and succeeds", () =>
    Effect.gen(function*() {
      const fake = yield* FakeStripe
      yield* fake.reset
      yield* fake.script("POST /v1/payment_intents", { kind: "status", status: 500 })
      const outcome = yield* (yield* PaymentProcessor).chargeOffSession(charge("recharge-flaky"))
      assert.strictEqual(outcome.status, "succeeded")
      const requests = yield* fake.requests("POST /v1/payment_intents")
      assert.deepStrictEqual(requests.map((request) => request.idempotencyKey), ["recharge-flaky", "recharge-flaky"])
    }))

  it.effect("chargeOffSession: no answer within the timeout is a ProcessorFailure", () =>
    Effect.gen(function*() {
      const fake = yield* FakeStripe
      yield* fake.reset
      yield* fake.script("POST /v1/payment_intents", { kind: "hang" })
      const processor = yield* processorWith({ timeoutMs: 300, maxNetworkRetries: 0 })
      const error = yield* Effect.flip(processor.chargeOffSession(charge("recharge-slow")))
      assert.instanceOf(error, ProcessorFailure)
      assert.include(error.message, "StripeConnectionError")
    }))

  it.effect("a wrong secret key is a ProcessorFailure naming Stripe's 401", () =>
    Effect.gen(function*() {
      const fake = yield* FakeStripe
      yield* fake.reset
      const processor = yield* processorWith({ secretKey: Redacted.make("sk_test_wrong") })
      const error = yield* Effect.flip(processor.createCheckout(checkoutRequest()))
      assert.include(error.message, "401")
      assert.lengthOf(fake.server.sessions(), 0)
    }))

  it.effect("parseWebhook: a signed checkout.session.completed of our checkout is checkout_completed with the saved card", () =>
    Effect.gen(function*() {
      const fake = yield* FakeStripe
      yield* fake.reset
      const processor = yield* PaymentProcessor
      const session = yield* processor.createCheckout(checkoutRequest())
      const paid = yield* fake.completeSession(session.processorRef, { paymentMethodId: "pm_card_saved_4242" })
      const webhook = checkoutCompletedWebhook(paid, undefined, { eventId: "evt_paid_1" })
      const event = yield* processor.parseWebhook(webhook.payload, webhook.header)
      assert.deepStrictEqual(event, {
        kind: "checkout_completed",
        eventId: "evt_paid_1",
        checkoutId: CHECKOUT_ID,
        processorRef: session.processorRef,
        amountMicros: 25_000_000,
        customerId: fake.server.customers()[0]!.id,
        paymentMethodId: "pm_card_saved_4242"
      })
      const [lookup] = yield* fake.requests("GET /v1/payment_intents/:id")
      assert.strictEqual(lookup!.path, `/v1/payment_intents/${paid.payment_intent}`)
    }))

  it.effect("parseWebhook: when the payment intent cannot be read the payment is still reported, without a card", () =>
    Effect.gen(function*() {
      const fake = yield* FakeStripe
      yield* fake.reset
      const processor = yield* PaymentProcessor
      const session = yield* processor.createCheckout(checkoutRequest())
      const paid = yield* fake.completeSession(session.processorRef)
      yield* fake.always("GET /v1/payment_intents/:id", { kind: "status", status: 503 })
      const webhook = checkoutCompletedWebhook(paid)
      const event = yield* processor.parseWebhook(webhook.payload, webhook.header)
      assert.strictEqual(event.kind, "checkout_completed")
      if (event.kind !== "checkout_completed") return
      assert.strictEqual(event.amountMicros, 25_000_000)
      assert.isNull(event.paymentMethodId)
    }))

  it.effect("parseWebhook: a tampered body, a wrong secret, a stale or a missing signature are InvalidWebhook", () =>
    Effect.gen(function*() {
      const fake = yield* FakeStripe
      yield* fake.reset
      const processor = yield* PaymentProcessor
      const session = yield* processor.createCheckout(checkoutRequest())
      const paid = yield* fake.completeSession(session.processorRef)
      const webhook = checkoutCompletedWebhook(paid)

      const tampered = webhook.payload.replace('"amount_total":2500', '"amount_total":250000')
      assert.notStrictEqual(tampered, webhook.payload)
      const rejections = [
        yield* Effect.flip(processor.parseWebhook(tampered, webhook.header)),
        yield* Effect.flip(processor.parseWebhook(webhook.payload, checkoutCompletedWebhook(paid, "whsec_other").header)),
        yield* Effect.flip(processor.parseWebhook(
          webhook.payload,
          checkoutCompletedWebhook(paid, undefined, { timestamp: Math.floor(Date.now() / 1000) - 3_600 }).header
        )),
        yield* Effect.flip(processor.parseWebhook(webhook.payload, undefined)),
        yield* Effect.flip(processor.parseWebhook(webhook.payload, "")),
        yield* Effect.flip(processor.parseWebhook(
          webhook.payload,
          checkoutCompletedWebhook(paid, undefined, { timestamp: Math.floor(Date.now() / 1000) + 400 }).header
        ))
      ]
      assert.deepStrictEqual(rejections.map((error) => error._tag), Array(6).fill("InvalidWebhook"))
      assert.include(rejections[5]!.message, "300 seconds", "a signature from the future")
      assert.include(rejections[0]!.message, "signature verification failed")
      assert.include(rejections[3]!.message, "missing")
      // The untouched delivery is accepted, so the rejections above are about the changes alone.
      assert.strictEqual((yield* processor.parseWebhook(webhook.payload, webhook.header)).kind, "checkout_completed")
    }))

  it.effect("parseWebhook: other event types, unpaid sessions and sessions that are not ours are ignored", () =>
    Effect.gen(function*() {
      const fake = yield* FakeStripe
      yield* fake.reset
      const processor = yield* PaymentProcessor
      const session = yield* processor.createCheckout(checkoutRequest())
      const [open] = fake.server.sessions()
      const paid = yield* fake.completeSession(session.processorRef)
      const deliveries = [
        signedWebhook(stripeEvent("payment_intent.succeeded", fake.server.paymentIntents()[0], { id: "evt_pi" })),
        signedWebhook(stripeEvent("checkout.session.completed", open, { id: "evt_unpaid" })),
        signedWebhook(stripeEvent("checkout.session.completed", { ...paid, client_reference_id: "someone-else", metadata: {} }, {
          id: "evt_foreign"
        })),
        signedWebhook(stripeEvent("checkout.session.expired", paid, { id: "evt_expired" }))
      ]
      const events = []
      for (const delivery of deliveries) events.push(yield* processor.parseWebhook(delivery.payload, delivery.header))
      assert.deepStrictEqual(events, [
        { kind: "ignored", eventId: "evt_pi", type: "payment_intent.succeeded" },
        { kind: "ignored", eventId: "evt_unpaid", type: "checkout.session.completed" },
        { kind: "ignored", eventId: "evt_foreign", type: "checkout.session.completed" },
        { kind: "ignored", eventId: "evt_expired", type: "checkout.session.expired" }
      ])
      assert.lengthOf(yield* fake.requests("GET /v1/payment_intents/:id"), 0)
    }))
})

describe("StripeTranslation", () => {
  it("centsOf accepts positive whole cents only", () => {
    assert.deepStrictEqual(centsOf(25_000_000), Result.succeed(2_500))
    assert.deepStrictEqual(centsOf(10_000), Result.succeed(1))
    for (const micros of [25_000_001, 5_000, 0, -10_000, 1.5, Number.NaN]) assert.isTrue(Result.isFailure(centsOf(micros)))
  })

  it("stripeExpiresAt keeps an expiry inside the window and clamps one outside it", () => {
    const now = Date.UTC(2026, 9, 1, 12, 0, 0)
    const inTwoHours = new Date(now + 2 * 60 * 60_000)
    assert.strictEqual(stripeExpiresAt(inTwoHours, now), inTwoHours.getTime() / 1000)
    const soon = stripeExpiresAt(new Date(now + 60_000), now)
    assert.isAbove(soon * 1000, now + STRIPE_CHECKOUT_MIN_LIFETIME_MS)
    assert.isAtMost(soon * 1000, now + STRIPE_CHECKOUT_MIN_LIFETIME_MS + 5 * 60_000)
    const far = stripeExpiresAt(new Date(now + 7 * STRIPE_CHECKOUT_MAX_LIFETIME_MS), now)
    assert.isBelow(far * 1000, now + STRIPE_CHECKOUT_MAX_LIFETIME_MS)
    assert.isAtLeast(far * 1000, now + STRIPE_CHECKOUT_MAX_LIFETIME_MS - 5 * 60_000)
  })

  it("checkoutParams sends the currency it is given and omits a null e-mail", () => {
    const params = Result.getOrThrow(checkoutParams(checkoutRequest({ customerEmail: null }), { currency: "eur", nowMs: Date.now() }))
    assert.strictEqual(params.params.line_items?.[0]?.price_data?.currency, "eur")
    assert.strictEqual(params.params.customer_creation, "always")
    assert.isFalse("customer_email" in params.params)
  })

  it("outcomeOfError: card errors are outcomes, infrastructure errors are failures", () => {
    const intent = { id: "pi_1", status: "requires_payment_method" } as Stripe.PaymentIntent
    assert.deepStrictEqual(
      outcomeOfError(new Stripe.errors.StripeCardError({ code: "authentication_required", payment_intent: intent })),
      Result.succeed({ status: "requires_action", processorRef: "pi_1", reason: "authentication_required" })
    )
    assert.deepStrictEqual(
      outcomeOfError(new Stripe.errors.StripeCardError({ code: "card_declined", decline_code: "lost_card" })),
      Result.succeed({ status: "failed", processorRef: null, reason: "lost_card" })
    )
    assert.deepStrictEqual(
      outcomeOfError(new Stripe.errors.StripeCardError({ code: "expired_card" })),
      Result.succeed({ status: "failed", processorRef: null, reason: "expired_card" })
    )
    assert.deepStrictEqual(
      outcomeOfError(new Stripe.errors.StripeInvalidRequestError({ code: "resource_missing", message: "No such PaymentMethod" })),
      Result.succeed({ status: "failed", processorRef: null, reason: "invalid_request: resource_missing" })
    )
    for (const error of [
      new Stripe.errors.StripeAPIError({ message: "boom" }),
      new Stripe.errors.StripeConnectionError({ message: "reset" }),
      new Stripe.errors.StripeRateLimitError({ message: "slow down" }),
      new Stripe.errors.StripeIdempotencyError({ message: "key reused" }),
      new Error("socket hang up")
    ]) assert.isTrue(Result.isFailure(outcomeOfError(error)), String(error))
  })

  it("outcomeOfIntent: processing is a failure, a canceled intent is failed with its status", () => {
    assert.isTrue(Result.isFailure(outcomeOfIntent({ id: "pi_2", status: "processing" } as Stripe.PaymentIntent)))
    assert.deepStrictEqual(
      outcomeOfIntent({ id: "pi_3", status: "canceled", last_payment_error: null } as Stripe.PaymentIntent),
      Result.succeed({ status: "failed", processorRef: "pi_3", reason: "payment intent canceled" })
    )
  })

  it("translateEvent: metadata names the checkout when client_reference_id is absent; another currency is ignored", () => {
    const session = {
      id: "cs_test_1",
      object: "checkout.session",
      amount_total: 100_000,
      currency: "usd",
      customer: { id: "cus_9" },
      client_reference_id: null,
      metadata: { checkout_id: CHECKOUT_ID },
      payment_intent: { id: "pi_9", payment_method: "pm_9" },
      payment_status: "paid"
    }
    const event = (object: unknown) => stripeEvent("checkout.session.completed", object, { id: "evt_9" }) as unknown as Stripe.Event
    assert.deepStrictEqual(translateEvent(event(session), "usd"), {
      event: {
        kind: "checkout_completed",
        eventId: "evt_9",
        checkoutId: CHECKOUT_ID,
        processorRef: "cs_test_1",
        amountMicros: 1_000_000_000,
        customerId: "cus_9",
        paymentMethodId: "pm_9"
      },
      paymentIntentId: null
    })
    assert.deepStrictEqual(translateEvent(event({ ...session, currency: "eur" }), "usd").event, {
      kind: "ignored",
      eventId: "evt_9",
      type: "checkout.session.completed"
    })
  })
})
