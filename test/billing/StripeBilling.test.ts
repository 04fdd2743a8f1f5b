/**
 * Billing through Stripe, against a local stand-in for its API: a checkout becomes a Checkout Session; the signed
 * `checkout.session.completed` webhook credits the purchase once (replays and a second event for the same session
 * credit nothing; bad signatures are refused); the saved card then serves auto-recharge, whose off-session charge
 * needing the customer's action is recorded as failed, shown in GET /v1/billing and not retried in a loop.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option, Redacted, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { ServerAddress } from "../../src/server/Listen.js"
import { call, codeOf } from "../support/Api.js"
import {
  checkoutCompletedWebhook,
  FAKE_STRIPE_SECRET_KEY,
  FAKE_WEBHOOK_SECRET,
  FakeStripe,
  signedWebhook,
  stripeEvent
} from "../support/FakeStripe.js"
import { assertMoneyInvariants } from "../support/Invariants.js"
import { rawRequest } from "../support/RawHttp.js"
import { oneQuestion, postRun } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerOnKnownPortLive } from "../support/TestServer.js"

const StripeServer = Layer.unwrap(
  Effect.map(FakeStripe, (fake) =>
    TestServerOnKnownPortLive({
      billingProvider: "stripe",
      stripeSecretKey: Option.some(Redacted.make(FAKE_STRIPE_SECRET_KEY)),
      stripeWebhookSecret: Option.some(Redacted.make(FAKE_WEBHOOK_SECRET)),
      stripeApiUrl: Option.some(`http://${fake.server.host}:${fake.server.port}`)
    }))
).pipe(Layer.provideMerge(FakeStripe.layer))

const deliver = (webhook: { payload: string; header: string }) =>
  Effect.flatMap(ServerAddress, (address) =>
    rawRequest(address.url, {
      method: "POST",
      path: "/billing/stripe/webhook",
      headers: { "content-type": "application/json", "stripe-signature": webhook.header },
      body: webhook.payload
    }))

const summary = (secret: string) => Effect.map(call("GET", "/v1/billing", { secret }), (response) => response.json())

/** Buys credit through a Stripe checkout paid in the stand-in; returns the completed session. */
const purchase = (secret: string, amountMicros: number) =>
  Effect.gen(function*() {
    const fake = yield* FakeStripe
    const checkout = yield* call("POST", "/v1/billing/checkout", { secret, body: { amount_micros: amountMicros } })
    assert.strictEqual(checkout.status, 200, checkout.text)
    const session = fake.server.sessions().find((candidate: any) => candidate.client_reference_id === checkout.json().checkout_id)
    assert.isDefined(session)
    assert.strictEqual(checkout.json().checkout_url, session.url)
    return { checkout: checkout.json(), session: yield* fake.completeSession(session.id) }
  })

/** Polls `effect` until `check` holds (the test's timeout bounds the wait, however slow the machine). */
const eventually = <A>(effect: Effect.Effect<A, unknown, any>, check: (value: A) => boolean) =>
  Effect.retry(Effect.filterOrFail(effect, check), { schedule: Schedule.spaced("50 millis") })

layer(StripeServer, { excludeTestServices: true, timeout: "120 seconds" })("billing with Stripe", (it) => {
  describe("checkout and webhook", () => {
    it.effect("a signed checkout.session.completed credits once; replays and a second event for the session credit nothing", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization({ billing: true })
        const { checkout, session } = yield* purchase(organization.secret, 25_000_000)
        const webhook = checkoutCompletedWebhook(session)
        const first = yield* deliver(webhook)
        assert.strictEqual(first.status, 200, first.text)
        assert.deepStrictEqual(first.json(), { received: true, credited: true })
        const replay = yield* deliver(webhook)
        assert.deepStrictEqual(replay.json(), { received: true, credited: false })
        const other = yield* deliver(checkoutCompletedWebhook(session, FAKE_WEBHOOK_SECRET, { eventId: "evt_second_delivery" }))
        assert.deepStrictEqual(other.json(), { received: true, credited: false })
        const after = yield* summary(organization.secret)
        assert.strictEqual(after.balance_micros, 25_000_000)
        assert.deepStrictEqual(after.transactions.map((txn: any) => [txn.kind, txn.amount_micros]), [["purchase", 25_000_000]])
        assert.match(after.auto_recharge.payment_method.id, /^pm_/)
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ state: string }>`SELECT state FROM checkouts WHERE id = ${checkout.checkout_id}`
        assert.strictEqual(row!.state, "paid")
        yield* assertMoneyInvariants
      }))

    it.effect("400 for a tampered body, another secret or no signature; nothing credited", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization({ billing: true })
        const { session } = yield* purchase(organization.secret, 5_000_000)
        const webhook = checkoutCompletedWebhook(session)
        const tampered = { ...webhook, payload: webhook.payload.replace('"livemode":false', '"livemode":true') }
        assert.notStrictEqual(tampered.payload, webhook.payload)
        const wrongSecret = checkoutCompletedWebhook(session, "whsec_someone_else")
        for (const delivery of [tampered, wrongSecret, { payload: webhook.payload, header: "" }]) {
          const response = yield* deliver(delivery)
          assert.strictEqual(response.status, 400)
          assert.strictEqual(codeOf(response), "invalid_body")
        }
        assert.strictEqual((yield* summary(organization.secret)).balance_micros, 0)
      }))

    it.effect("a correctly signed but malformed event is 400, never 5xx: not an object, no id, a long id or one PostgreSQL cannot store; nothing credited", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization({ billing: true })
        const { session } = yield* purchase(organization.secret, 7_000_000)
        const completed = (id: unknown) => ({ ...stripeEvent("checkout.session.completed", session), id })
        const { id: _id, ...withoutId } = completed("evt_x")
        const malformed: ReadonlyArray<readonly [string, unknown]> = [
          ["{}", {}],
          ["[]", []],
          ["a string", "evt"],
          ["a number", 7],
          ["no id", withoutId],
          ["a numeric id", completed(12)],
          ["an empty id", completed("")],
          ["an id holding NUL", completed("evt_\u0000x")],
          ["an id with a lone surrogate", completed("evt_\ud800")],
          ["an id of 256 characters", completed(`evt_${"a".repeat(252)}`)],
          ["an id of 500 KB", completed(`evt_${"a".repeat(500_000)}`)],
          ["NUL elsewhere in the event", { ...completed("evt_nul_elsewhere"), type: "checkout.session.completed\u0000" }]
        ]
        for (const [what, event] of malformed) {
          const response = yield* deliver(signedWebhook(event))
          assert.strictEqual(response.status, 400, `${what}: ${response.text.slice(0, 200)}`)
          assert.strictEqual(codeOf(response), "invalid_body", what)
        }
        const before = yield* summary(organization.secret)
        assert.strictEqual(before.balance_micros, 0, "nothing credited")
        assert.deepStrictEqual(before.transactions, [])
        const atLimit = yield* deliver(signedWebhook(completed(`evt_${"b".repeat(251)}`)))
        assert.deepStrictEqual(atLimit.json(), { received: true, credited: true }, "an id of 255 characters is an event")
        assert.strictEqual((yield* summary(organization.secret)).balance_micros, 7_000_000)
        yield* assertMoneyInvariants
      }))

    it.effect("a payment that does not match its checkout credits nothing: amount, session, processor, timestamp", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization({ billing: true })
        const { checkout, session } = yield* purchase(organization.secret, 5_000_000)
        const cheap = yield* deliver(checkoutCompletedWebhook({ ...session, amount_total: 100 }, FAKE_WEBHOOK_SECRET, { eventId: "evt_one_dollar" }))
        assert.deepStrictEqual(cheap.json(), { received: true, credited: false }, "a $1 payment on a $5 checkout")
        const otherSession = yield* deliver(checkoutCompletedWebhook({ ...session, id: "cs_test_someone_else" }, FAKE_WEBHOOK_SECRET, { eventId: "evt_other_session" }))
        assert.deepStrictEqual(otherSession.json(), { received: true, credited: false }, "another session id")
        const future = yield* deliver(checkoutCompletedWebhook(session, FAKE_WEBHOOK_SECRET, {
          eventId: "evt_from_the_future",
          timestamp: Math.floor(Date.now() / 1000) + 400
        }))
        assert.strictEqual(future.status, 400, "a signature 400 s in the future")
        assert.strictEqual(codeOf(future), "invalid_body")
        const sql = yield* SqlClient.SqlClient
        const local = `chk_${"a".repeat(32)}`
        yield* sql`INSERT INTO checkouts (id, organization_id, amount_micros, processor, processor_ref, state, expires_at)
          VALUES (${local}, ${organization.organizationId}, 5000000, 'local', ${local}, 'open', now() + interval '1 hour')`
        const viaStripe = yield* deliver(checkoutCompletedWebhook(
          { ...session, id: local, client_reference_id: local, metadata: { checkout_id: local } },
          FAKE_WEBHOOK_SECRET,
          { eventId: "evt_local_checkout" }
        ))
        assert.deepStrictEqual(viaStripe.json(), { received: true, credited: false }, "a local checkout through Stripe's webhook")
        assert.strictEqual((yield* summary(organization.secret)).balance_micros, 0)
        const genuine = yield* deliver(checkoutCompletedWebhook(session))
        assert.deepStrictEqual(genuine.json(), { received: true, credited: true })
        assert.strictEqual((yield* summary(organization.secret)).balance_micros, 5_000_000)
        const [row] = yield* sql<{ state: string }>`SELECT state FROM checkouts WHERE id = ${checkout.checkout_id}`
        assert.strictEqual(row!.state, "paid")
        yield* assertMoneyInvariants
      }))

    it.effect("the portal opens for the organization's Stripe customer", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization({ billing: true })
        const portal = yield* call("POST", "/v1/billing/portal", { secret: organization.secret })
        assert.strictEqual(portal.status, 200)
        assert.match(portal.json().portal_url, /^https?:\/\//)
        const fake = yield* FakeStripe
        const created = yield* fake.requests("POST /v1/customers")
        assert.isAtLeast(created.length, 1)
      }))
  })

  describe("auto-recharge", () => {
    it.effect("charges the saved card off-session once the balance dips; a charge needing action is recorded and not retried", () =>
      Effect.gen(function*() {
        const fake = yield* FakeStripe
        const organization = yield* seedOrganization({ billing: true })
        const { session } = yield* purchase(organization.secret, 5_000_000)
        yield* deliver(checkoutCompletedWebhook(session))
        const enable = yield* call("PUT", "/v1/billing/auto-recharge", {
          secret: organization.secret,
          body: { enabled: true, threshold_micros: 5_000_000, amount_micros: 20_000_000 }
        })
        assert.strictEqual(enable.status, 200, enable.text)
        assert.strictEqual((yield* postRun(organization.secret, oneQuestion())).status, 200)
        const charged = yield* eventually(summary(organization.secret), (body) =>
          body.transactions.some((txn: any) => txn.kind === "auto_recharge"))
        assert.deepStrictEqual(
          charged.transactions.filter((txn: any) => txn.kind === "auto_recharge").map((txn: any) => txn.amount_micros),
          [20_000_000]
        )
        const intents = yield* fake.requests("POST /v1/payment_intents")
        assert.strictEqual(intents.length, 1)
        assert.strictEqual(intents[0]!.body.off_session, "true")
        assert.match(String(intents[0]!.idempotencyKey), /rch_/)

        const needy = yield* seedOrganization({ billing: true })
        const bought = yield* purchase(needy.secret, 5_000_000)
        yield* deliver(checkoutCompletedWebhook(bought.session))
        yield* call("PUT", "/v1/billing/auto-recharge", {
          secret: needy.secret,
          body: { enabled: true, threshold_micros: 5_000_000, amount_micros: 10_000_000 }
        })
        yield* fake.always("POST /v1/payment_intents", { kind: "requires_action" })
        const before = (yield* fake.requests("POST /v1/payment_intents")).length
        assert.strictEqual((yield* postRun(needy.secret, oneQuestion())).status, 200)
        const failed = yield* eventually(summary(needy.secret), (body) => body.auto_recharge.last_failure !== null)
        assert.match(failed.auto_recharge.last_failure.reason, /requires_action/)
        assert.deepStrictEqual(Object.keys(failed.auto_recharge.last_failure).sort(), ["failed_at", "reason", "retry_at"])
        assert.match(failed.auto_recharge.last_failure.retry_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
        assert.isAbove(Date.parse(failed.auto_recharge.last_failure.retry_at), Date.parse(failed.auto_recharge.last_failure.failed_at))
        for (let i = 0; i < 3; i++) assert.strictEqual((yield* postRun(needy.secret, oneQuestion({ state: `more ${i}` }))).status, 200)
        yield* Effect.sleep("300 millis")
        assert.strictEqual((yield* fake.requests("POST /v1/payment_intents")).length - before, 1, "no retry loop")
        assert.isFalse((yield* summary(needy.secret)).transactions.some((txn: any) => txn.kind === "auto_recharge"))
        yield* fake.always("POST /v1/payment_intents", null)
        yield* assertMoneyInvariants
      }))
  })
})
