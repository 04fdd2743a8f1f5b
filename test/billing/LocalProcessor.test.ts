import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted, Result } from "effect"
import { TestClock } from "effect/testing"
import {
  checkoutToken,
  DEFAULT_PORTAL_TOKEN_TTL_SECONDS,
  localCustomerId,
  LocalProcessor,
  localPaymentMethodId,
  signPortalToken,
  verifyCheckoutToken,
  verifyPortalToken
} from "../../src/billing/LocalProcessor.js"
import { PaymentProcessor } from "../../src/billing/PaymentProcessor.js"

const KEY = Redacted.make("local-portal-signing-key-for-tests")
const OTHER_KEY = Redacted.make("another-key")
const CHECKOUT_ID = "chk_0123456789abcdef0123456789abcdef"

const local = Effect.provide(PaymentProcessor, LocalProcessor.layer({ publicBaseUrl: "http://localhost:8080/", signingKey: KEY }))

const reasonOf = (result: Result.Result<string, { readonly reason: string }>) =>
  Result.match(result, { onFailure: (error) => error.reason, onSuccess: (organizationId) => `ok:${organizationId}` })

describe("LocalProcessor", () => {
  it.effect("createCheckout: the service's own page for the checkout, with a stable local customer", () =>
    Effect.gen(function*() {
      const processor = yield* local
      assert.strictEqual(processor.name, "local")
      const request = {
        checkoutId: CHECKOUT_ID,
        organizationId: "org_acme",
        amountMicros: 25_000_000,
        customerId: null,
        customerEmail: null,
        successUrl: "http://localhost:8080/ok",
        cancelUrl: "http://localhost:8080/cancel",
        expiresAt: new Date(3_600_000)
      }
      const session = yield* processor.createCheckout(request)
      assert.deepStrictEqual(session, {
        url: `http://localhost:8080/billing/local/checkout/${CHECKOUT_ID}?token=${checkoutToken(CHECKOUT_ID, KEY)}`,
        processorRef: CHECKOUT_ID,
        customerId: localCustomerId("org_acme")
      })
      assert.match(session.customerId!, /^lcus_[0-9a-f]{24}$/)
      const token = new URL(session.url).searchParams.get("token")!
      assert.isTrue(verifyCheckoutToken(CHECKOUT_ID, token, KEY))
      assert.isFalse(verifyCheckoutToken(CHECKOUT_ID, token, OTHER_KEY), "another key's token")
      assert.isFalse(verifyCheckoutToken(CHECKOUT_ID.replace("0", "1"), token, KEY), "another checkout's token")
      assert.isFalse(verifyCheckoutToken(CHECKOUT_ID, token.slice(1), KEY))
      assert.strictEqual((yield* processor.createCheckout(request)).customerId, session.customerId)
      assert.notStrictEqual(localCustomerId("org_other"), session.customerId)
      const known = yield* processor.createCheckout({ ...request, customerId: "lcus_existing" })
      assert.strictEqual(known.customerId, "lcus_existing")
    }))

  it.effect("createPortal: a signed link that verifies to the organization until the TTL passes", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(1_800_000_000_000)
      const portal = yield* (yield* local).createPortal({
        organizationId: "org_acme",
        customerId: null,
        customerEmail: null,
        returnUrl: "http://localhost:8080/billing"
      })
      const prefix = "http://localhost:8080/billing/local/portal/"
      assert.isTrue(portal.url.startsWith(prefix), portal.url)
      assert.strictEqual(portal.customerId, localCustomerId("org_acme"))
      const token = portal.url.slice(prefix.length)
      const expiry = 1_800_000_000_000 + DEFAULT_PORTAL_TOKEN_TTL_SECONDS * 1000
      assert.strictEqual(reasonOf(verifyPortalToken(token, KEY, new Date(expiry - 1))), "ok:org_acme")
      assert.strictEqual(reasonOf(verifyPortalToken(token, KEY, new Date(expiry))), "expired")
    }))

  it.effect("chargeOffSession: an lpm_ card always succeeds, once per idempotency key", () =>
    Effect.gen(function*() {
      const processor = yield* local
      const charge = {
        organizationId: "org_acme",
        customerId: localCustomerId("org_acme"),
        paymentMethodId: localPaymentMethodId("org_acme"),
        amountMicros: 25_000_000,
        idempotencyKey: "recharge-1"
      }
      const first = yield* processor.chargeOffSession(charge)
      assert.strictEqual(first.status, "succeeded")
      assert.match(first.processorRef!, /^lpi_[0-9a-f]{32}$/)
      assert.deepStrictEqual(yield* processor.chargeOffSession(charge), first)
      const second = yield* processor.chargeOffSession({ ...charge, idempotencyKey: "recharge-2" })
      assert.notStrictEqual(second.processorRef, first.processorRef)
      assert.deepStrictEqual(
        yield* processor.chargeOffSession({ ...charge, paymentMethodId: "pm_real_card", idempotencyKey: "recharge-3" }),
        { status: "failed", processorRef: null, reason: "unknown_payment_method" }
      )
      const error = yield* Effect.flip(processor.chargeOffSession({ ...charge, amountMicros: -1, idempotencyKey: "recharge-4" }))
      assert.strictEqual(error._tag, "ProcessorFailure")
    }))

  it.effect("parseWebhook: the local processor has no webhooks", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip((yield* local).parseWebhook("{}", "t=1,v1=abc"))
      assert.strictEqual(error._tag, "InvalidWebhook")
    }))
})

describe("verifyPortalToken", () => {
  const now = new Date(Date.UTC(2026, 9, 1, 12, 0, 0))
  const inAnHour = new Date(now.getTime() + 3_600_000)

  it("accepts a token signed with the key before its expiry, whatever the organization id holds", () => {
    for (const organizationId of ["org_acme", "Acme Ltd. / ünïcode ✓", "a.b.c"]) {
      const token = signPortalToken(organizationId, inAnHour, KEY)
      assert.match(token, /^[A-Za-z0-9_-]+\.[0-9]+\.[A-Za-z0-9_-]{43}$/)
      assert.strictEqual(reasonOf(verifyPortalToken(token, KEY, now)), `ok:${organizationId}`)
    }
  })

  it("refuses an expired token", () => {
    const token = signPortalToken("org_acme", new Date(now.getTime() - 1_000), KEY)
    assert.strictEqual(reasonOf(verifyPortalToken(token, KEY, now)), "expired")
  })

  it("refuses a tampered organization, expiry or signature, and another key's token", () => {
    const token = signPortalToken("org_acme", inAnHour, KEY)
    const [id, expiry, signature] = token.split(".") as [string, string, string]
    const otherOrganization = Buffer.from("org_evil").toString("base64url")
    const flipped = `${signature.slice(0, -1)}${signature.endsWith("A") ? "B" : "A"}`
    assert.strictEqual(reasonOf(verifyPortalToken(`${otherOrganization}.${expiry}.${signature}`, KEY, now)), "bad_signature")
    assert.strictEqual(reasonOf(verifyPortalToken(`${id}.${Number(expiry) + 86_400}.${signature}`, KEY, now)), "bad_signature")
    assert.strictEqual(reasonOf(verifyPortalToken(`${id}.${expiry}.${flipped}`, KEY, now)), "bad_signature")
    assert.strictEqual(reasonOf(verifyPortalToken(token, OTHER_KEY, now)), "bad_signature")
    // A tampered token stays refused for its signature even once expired: expiry is never checked first.
    const later = new Date(inAnHour.getTime() + 1)
    assert.strictEqual(reasonOf(verifyPortalToken(`${otherOrganization}.${expiry}.${signature}`, KEY, later)), "bad_signature")
  })

  it("refuses a signature spelled with its last character's unused bits set (the same MAC bytes, not as signed)", () => {
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    for (const organizationId of ["org_acme", "org_a", "org_b", "org_c", "org_d", "org_e", "org_f", "org_g"]) {
      const token = signPortalToken(organizationId, inAnHour, KEY)
      const last = alphabet.indexOf(token.at(-1)!)
      assert.strictEqual(last % 4, 0, "signed in canonical form")
      for (const low of [1, 2, 3]) {
        const variant = `${token.slice(0, -1)}${alphabet[last + low]}`
        assert.deepStrictEqual(Buffer.from(variant.split(".")[2]!, "base64url"), Buffer.from(token.split(".")[2]!, "base64url"))
        assert.strictEqual(reasonOf(verifyPortalToken(variant, KEY, now)), "bad_signature", variant)
      }
    }
  })

  it("refuses malformed tokens", () => {
    const token = signPortalToken("org_acme", inAnHour, KEY)
    for (const bad of ["", "abc", "a.b.c", `${token}.extra`, token.replace(/\.[0-9]+\./, ".12x4."), `${token}x`, token.replace(".", "+.")]) {
      assert.strictEqual(reasonOf(verifyPortalToken(bad, KEY, now)), "malformed", bad)
    }
  })
})
