/**
 * The billing routes with the local processor: the summary, checkout bounds and rejections, the local checkout page
 * (credited exactly once even when submitted twice), the portal behind its signed link, auto-recharge settings, the
 * sign-up credit once per verified e-mail address, and the route contract.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { ServerAddress } from "../../src/server/Listen.js"
import { Organizations } from "../../src/organizations/Organizations.js"
import { call, codeOf } from "../support/Api.js"
import { assertMoneyInvariants, grantCredit } from "../support/Invariants.js"
import { rawRequest } from "../support/RawHttp.js"
import { checkAuthentication, checkRoles, checkScopes, route } from "../support/RouteContract.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerOnKnownPortLive, TestServerWithConsoleLive } from "../support/TestServer.js"

const BillingRoutes = [
  route("GET", "/v1/billing", "billing_read"),
  route("POST", "/v1/billing/checkout", "billing_write", { body: { amount_micros: 25_000_000 } }),
  route("POST", "/v1/billing/portal", "billing_write"),
  route("PUT", "/v1/billing/auto-recharge", "billing_write", {
    body: { enabled: false, threshold_micros: 1_000_000, amount_micros: 10_000_000 }
  })
]

const page = (url: string, method = "GET") =>
  Effect.flatMap(ServerAddress, (address) => {
    const link = new URL(url)
    return rawRequest(address.url, { method, path: link.pathname + link.search })
  })

/**
 * `PUT /v1/billing/auto-recharge` with auto-recharge off: the threshold, never charged, takes any whole number of
 * micro-USD from 0 to 1,000,000,000; the amount, charged, whole cents only; any other number is invalid_amount.
 */
const assertAutoRechargeAmounts = (secret: string) =>
  Effect.gen(function*() {
    const put = (body: unknown) => call("PUT", "/v1/billing/auto-recharge", { secret, body })
    for (const threshold of [0, 5, 1, 9_999, 1_234_567, 999_999_999, 1_000_000_000]) {
      const response = yield* put({ enabled: false, threshold_micros: threshold, amount_micros: 10_000_000 })
      assert.strictEqual(response.status, 200, `threshold ${threshold}: ${response.text}`)
      assert.strictEqual(response.json().threshold_micros, threshold)
    }
    const summary = (yield* call("GET", "/v1/billing", { secret })).json()
    assert.strictEqual(summary.auto_recharge.threshold_micros, 1_000_000_000)
    for (const literal of ["1000000001", "2.5", "1e30", "99999999999999999999", "1e400"]) {
      const response = yield* call("PUT", "/v1/billing/auto-recharge", {
        secret,
        rawBody: `{"enabled": false, "threshold_micros": ${literal}, "amount_micros": 10000000}`
      })
      assert.strictEqual(response.status, 400, `threshold ${literal}: ${response.text}`)
      assert.strictEqual(codeOf(response), "invalid_amount", literal)
      assert.include(messageOf(response), "threshold_micros must be a whole number of micro-USD from 0 to 1000000000", literal)
      assert.notInclude(messageOf(response), "cents", literal)
    }
    for (const literal of ["10000001", "10000000.5", "1e30", "4990000"]) {
      const response = yield* call("PUT", "/v1/billing/auto-recharge", {
        secret,
        rawBody: `{"enabled": false, "threshold_micros": 5, "amount_micros": ${literal}}`
      })
      assert.strictEqual(response.status, 400, `amount ${literal}: ${response.text}`)
      assert.strictEqual(codeOf(response), "invalid_amount", literal)
    }
    const cents = yield* put({ enabled: false, threshold_micros: 5, amount_micros: 10_000_001 })
    assert.include(messageOf(cents), "amount_micros must be whole cents")
    assert.include(messageOf(cents), "cannot charge a fraction of a cent")
    for (const body of [
      { enabled: false, threshold_micros: "5", amount_micros: 10_000_000 },
      { enabled: false, threshold_micros: 5, amount_micros: -10_000_000 }
    ]) {
      const response = yield* put(body)
      assert.strictEqual(response.status, 422, JSON.stringify(body))
      assert.isTrue(response.text.startsWith("Failed to deserialize the JSON body into the target type"))
    }
  })

const buy = (secret: string, amountMicros: number) =>
  Effect.gen(function*() {
    const checkout = yield* call("POST", "/v1/billing/checkout", { secret, body: { amount_micros: amountMicros } })
    assert.strictEqual(checkout.status, 200, checkout.text)
    const paid = yield* page(checkout.json().checkout_url, "POST")
    assert.strictEqual(paid.status, 200)
    return checkout.json()
  })

/** The message of a JSON error response. */
const messageOf = (response: { json: () => any }): string => response.json().error.message

layer(TestServerOnKnownPortLive(), { excludeTestServices: true, timeout: "180 seconds" })("billing", (it) => {
  describe("route contract", () => {
    it.effect("scopes on the four billing routes", () => checkScopes(BillingRoutes))
  })

  describe("GET /v1/billing", () => {
    it.effect("200 balance, holds, available, settings and transactions newest first", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, 3_000_000)
        const response = yield* call("GET", "/v1/billing", { secret: organization.secret })
        assert.strictEqual(response.status, 200)
        const body = response.json()
        assert.deepStrictEqual(
          { ...body, transactions: body.transactions.map((txn: any) => ({ ...txn, id: txn.id.slice(0, 4), created_at: "" })) },
          {
            organization_id: organization.organizationId,
            billing_enabled: true,
            balance_micros: 3_000_000,
            reserved_micros: 0,
            available_micros: 3_000_000,
            auto_recharge: { enabled: false, threshold_micros: 0, amount_micros: 5_000_000, payment_method: null, last_failure: null },
            transactions: [{ id: "txn_", kind: "grant", amount_micros: 3_000_000, description: "test grant", created_at: "" }]
          }
        )
        const queried = yield* call("GET", "/v1/billing?page=2", { secret: organization.secret })
        assert.strictEqual(queried.status, 400)
        assert.isTrue(queried.text.startsWith("Failed to deserialize query string"))
      }))
  })

  describe("POST /v1/billing/checkout", () => {
    it.effect("400 invalid_amount for any number outside 5 to 1,000 dollars, not whole or not whole cents; 422 negative or mistyped; 415 untyped", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        for (const amount of [4_990_000, 1_000_010_000, 0, 5_000_001]) {
          const response = yield* call("POST", "/v1/billing/checkout", { secret: organization.secret, body: { amount_micros: amount } })
          assert.strictEqual(response.status, 400, String(amount))
          assert.strictEqual(codeOf(response), "invalid_amount", String(amount))
        }
        // Numbers the old schema refused as a type mismatch: fractions, huge values, integers past 2^53, and a
        // literal that JSON.parse reads as Infinity. Each is an amount out of bounds, not a body of the wrong type.
        for (const literal of ["2.5", "5000000.5", "1e30", "99999999999999999999", "9007199254740993", "1e400", "25000000.000001"]) {
          const response = yield* call("POST", "/v1/billing/checkout", { secret: organization.secret, rawBody: `{"amount_micros": ${literal}}` })
          assert.strictEqual(response.status, 400, `${literal}: ${response.text}`)
          assert.strictEqual(codeOf(response), "invalid_amount", literal)
          assert.include(messageOf(response), "amount_micros must be a whole number of micro-USD from 5000000 to 1000000000", literal)
        }
        const fraction = yield* call("POST", "/v1/billing/checkout", { secret: organization.secret, body: { amount_micros: 5_000_001 } })
        assert.include(messageOf(fraction), "whole cents (a multiple of 10000 micro-USD)")
        assert.include(messageOf(fraction), "cannot charge a fraction of a cent")
        for (const body of [{ amount_micros: -5_000_000 }, { amount_micros: -1e30 }, { amount_micros: -0.5 }, { amount_micros: "25" }, { amount_micros: null }, {}, { amount_micros: 5_000_000, currency: "eur" }]) {
          const response = yield* call("POST", "/v1/billing/checkout", { secret: organization.secret, body })
          assert.strictEqual(response.status, 422, JSON.stringify(body))
          assert.isTrue(response.text.startsWith("Failed to deserialize the JSON body into the target type"))
        }
        const malformed = yield* call("POST", "/v1/billing/checkout", { secret: organization.secret, rawBody: "{" })
        assert.strictEqual(malformed.status, 400)
        assert.isTrue(malformed.text.startsWith("Failed to parse the request body as JSON"))
        const untyped = yield* call("POST", "/v1/billing/checkout", {
          secret: organization.secret,
          headers: { "content-type": "text/plain" },
          rawBody: "{}"
        })
        assert.strictEqual(untyped.status, 415)
        const sql = yield* SqlClient.SqlClient
        const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM checkouts WHERE organization_id = ${organization.organizationId}`
        assert.strictEqual(count!.n, 0)
      }))

    it.effect("the local checkout page shows the amount; its one button credits the purchase exactly once", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization({ billing: true })
        const checkout = yield* call("POST", "/v1/billing/checkout", { secret: organization.secret, body: { amount_micros: 25_000_000 } })
        assert.strictEqual(checkout.status, 200)
        const body = checkout.json()
        assert.match(body.checkout_id, /^chk_[0-9a-f]{32}$/)
        assert.strictEqual(body.amount_micros, 25_000_000)
        assert.match(body.expires_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
        const address = yield* ServerAddress
        assert.isTrue(body.checkout_url.startsWith(`${address.url}/billing/local/checkout/`))
        const open = yield* page(body.checkout_url)
        assert.strictEqual(open.status, 200)
        assert.match(String(open.headers["content-type"]), /^text\/html/)
        assert.include(open.text, "$25.00")
        assert.include(open.text, "id=\"pay\"")
        assert.notMatch(open.text, /<(script|link)[^>]+(src|href)="https?:/)
        const first = yield* page(body.checkout_url, "POST")
        const second = yield* page(body.checkout_url, "POST")
        assert.strictEqual(first.status, 200)
        assert.strictEqual(second.status, 200)
        assert.notInclude(second.text, "id=\"pay\"")
        const summary = (yield* call("GET", "/v1/billing", { secret: organization.secret })).json()
        assert.strictEqual(summary.balance_micros, 25_000_000)
        assert.deepStrictEqual(summary.transactions.map((txn: any) => [txn.kind, txn.amount_micros]), [["purchase", 25_000_000]])
        assert.deepStrictEqual(summary.auto_recharge.payment_method, { id: summary.auto_recharge.payment_method.id, brand: "Test card", last4: "4242" })
        const unknown = yield* page(`${address.url}/billing/local/checkout/chk_${"0".repeat(32)}`)
        assert.strictEqual(unknown.status, 404)
        yield* assertMoneyInvariants
      }))

    it.effect("the local checkout needs its link's token, and refuses a payment posted from another site", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization({ billing: true })
        const body = (yield* call("POST", "/v1/billing/checkout", { secret: organization.secret, body: { amount_micros: 1_000_000_000 } })).json()
        const link = new URL(body.checkout_url)
        assert.match(link.searchParams.get("token") ?? "", /^[A-Za-z0-9_-]{43}$/)
        const address = yield* ServerAddress
        const bare = `${address.url}${link.pathname}`
        assert.strictEqual((yield* page(bare)).status, 404, "the id alone opens nothing")
        assert.strictEqual((yield* page(bare, "POST")).status, 404, "the id alone pays nothing")
        assert.strictEqual((yield* page(`${bare}?token=${"A".repeat(43)}`, "POST")).status, 404, "a forged token pays nothing")
        for (const headers of [{ origin: "https://attacker.example" }, { origin: "null" }, { "sec-fetch-site": "cross-site" }]) {
          const forged = yield* rawRequest(address.url, { method: "POST", path: link.pathname + link.search, headers })
          assert.strictEqual(forged.status, 403, JSON.stringify(headers))
        }
        const nul = yield* rawRequest(address.url, { method: "GET", path: "/billing/local/checkout/%00" })
        assert.strictEqual(nul.status, 404)
        assert.strictEqual((yield* call("GET", "/v1/billing", { secret: organization.secret })).json().balance_micros, 0)
        const open = yield* page(body.checkout_url)
        assert.include(open.text, `action="${link.pathname}?token=${link.searchParams.get("token")}"`)
        const sameSite = yield* rawRequest(address.url, {
          method: "POST",
          path: link.pathname + link.search,
          headers: { origin: address.url, "sec-fetch-site": "same-origin" }
        })
        assert.strictEqual(sameSite.status, 200)
        assert.strictEqual((yield* call("GET", "/v1/billing", { secret: organization.secret })).json().balance_micros, 1_000_000_000)
      }))

    it.effect("an expired checkout link shows expired and credits nothing", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization({ billing: true })
        const body = (yield* call("POST", "/v1/billing/checkout", { secret: organization.secret, body: { amount_micros: 5_000_000 } })).json()
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE checkouts SET expires_at = now() - interval '1 second' WHERE id = ${body.checkout_id}`
        const expired = yield* page(body.checkout_url, "POST")
        assert.include(expired.text.toLowerCase(), "expired")
        const summary = (yield* call("GET", "/v1/billing", { secret: organization.secret })).json()
        assert.strictEqual(summary.balance_micros, 0)
      }))
  })

  describe("POST /v1/billing/portal", () => {
    it.effect("a signed link to the portal with the transactions and the saved card; tampered links are refused", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization({ billing: true })
        yield* buy(organization.secret, 10_000_000)
        const portal = yield* call("POST", "/v1/billing/portal", { secret: organization.secret })
        assert.strictEqual(portal.status, 200)
        const url: string = portal.json().portal_url
        const shown = yield* page(url)
        assert.strictEqual(shown.status, 200)
        assert.include(shown.text, "$10.00")
        assert.include(shown.text, "4242")
        const tampered = url.replace(/.$/, (last) => (last === "A" ? "B" : "A"))
        assert.strictEqual((yield* page(tampered)).status, 404)
        const withBody = yield* call("POST", "/v1/billing/portal", { secret: organization.secret, rawBody: "x".repeat(2 * 1024 * 1024) })
        assert.strictEqual(withBody.status, 413)
      }))
  })

  describe("PUT /v1/billing/auto-recharge", () => {
    it.effect("409 payment_method_required until a purchase saved a card; bounds are invalid_amount; returns the settings", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization({ billing: true })
        const settings = { enabled: true, threshold_micros: 2_000_000, amount_micros: 10_000_000 }
        const early = yield* call("PUT", "/v1/billing/auto-recharge", { secret: organization.secret, body: settings })
        assert.strictEqual(early.status, 409)
        assert.strictEqual(codeOf(early), "payment_method_required")
        const off = yield* call("PUT", "/v1/billing/auto-recharge", { secret: organization.secret, body: { ...settings, enabled: false } })
        assert.strictEqual(off.status, 200)
        for (const body of [{ ...settings, amount_micros: 1_000_000 }, { ...settings, threshold_micros: 1_000_010_000 }]) {
          const response = yield* call("PUT", "/v1/billing/auto-recharge", { secret: organization.secret, body })
          assert.strictEqual(codeOf(response), "invalid_amount", JSON.stringify(body))
        }
        const negative = yield* call("PUT", "/v1/billing/auto-recharge", { secret: organization.secret, body: { ...settings, threshold_micros: -1 } })
        assert.strictEqual(negative.status, 422)
        yield* assertAutoRechargeAmounts(organization.secret)
        yield* buy(organization.secret, 5_000_000)
        const on = yield* call("PUT", "/v1/billing/auto-recharge", { secret: organization.secret, body: settings })
        assert.strictEqual(on.status, 200)
        assert.strictEqual(on.json().enabled, true)
        assert.strictEqual(on.json().threshold_micros, 2_000_000)
        assert.strictEqual(on.json().payment_method.last4, "4242")
      }))
  })

  describe("sign-up credit", () => {
    it.effect("5,000,000 once per verified, normalized e-mail address; none for an unverified owner", () =>
      Effect.gen(function*() {
        const organizations = yield* Organizations
        const email = `Grace.Hopper+${Date.now()}@GoogleMail.com`
        const first = yield* organizations.create({ name: "A", ownerEmail: email, verified: true, billing: true })
        const again = yield* organizations.create({ name: "B", ownerEmail: email.replace(/\+\d+/, "+other").replace(".", ""), verified: true, billing: true })
        const unverified = yield* organizations.create({ name: "C", ownerEmail: `x${Date.now()}@example.com`, verified: false, billing: true })
        const balance = (secret: string) => Effect.map(call("GET", "/v1/billing", { secret }), (response) => response.json())
        const a = yield* balance(first.key.secret)
        assert.strictEqual(a.balance_micros, 5_000_000)
        assert.deepStrictEqual(a.transactions.map((txn: any) => txn.kind), ["signup_credit"])
        assert.strictEqual((yield* balance(again.key.secret)).balance_micros, 0)
        assert.strictEqual((yield* balance(unverified.key.secret)).balance_micros, 0)
        yield* assertMoneyInvariants
      }))
  })
})

layer(TestServerWithConsoleLive(), { excludeTestServices: true, timeout: "120 seconds" })("billing roles", (it) => {
  // The 401 cases expect odd credentials to be refused as session tokens that do not verify, which needs trust keys
  // (without them, anything that is not an API key is 503 auth_not_configured: test/auth/Sessions.test.ts).
  it.effect("authentication on the four billing routes", () => checkAuthentication(BillingRoutes))
  it.effect("the whole role table on the billing routes", () => checkRoles(BillingRoutes))
})
