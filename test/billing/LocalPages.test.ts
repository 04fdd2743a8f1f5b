import { assert, describe, it } from "@effect/vitest"
import { checkoutPage, escapeHtml, formatUsd, formatUtc, portalPage } from "../../src/billing/LocalPages.js"
import type { CheckoutPageInput, PortalPageInput } from "../../src/billing/LocalPages.js"

const HOSTILE = `<img src=x onerror="alert('pwned')"> & <script>alert(1)</script>`

const checkout = (overrides: Partial<CheckoutPageInput> = {}): CheckoutPageInput => ({
  checkoutId: "chk_0123456789abcdef0123456789abcdef",
  amountMicros: 25_000_000,
  organizationName: "Acme",
  expiresAt: new Date(Date.UTC(2026, 9, 1, 12, 30, 0)),
  state: "open",
  formAction: "/billing/local/checkout/chk_0123456789abcdef0123456789abcdef/pay",
  ...overrides
})

const portal = (overrides: Partial<PortalPageInput> = {}): PortalPageInput => ({
  organizationName: "Acme",
  balanceMicros: 12_340_000,
  paymentMethod: { brand: "Visa", last4: "4242" },
  transactions: [
    {
      id: "txn_usage_20261001",
      kind: "usage",
      amountMicros: -11_012,
      description: "Usage on 2026-10-01",
      createdAt: new Date(Date.UTC(2026, 9, 1, 23, 59, 0))
    },
    {
      id: "txn_0123456789abcdef0123456789abcdef",
      kind: "purchase",
      amountMicros: 25_000_000,
      description: "Credit purchase",
      createdAt: new Date(Date.UTC(2026, 9, 1, 9, 5, 0))
    }
  ],
  ...overrides
})

/** Asserts a page is a whole, script-free, self-contained document. */
const assertSelfContained = (html: string) => {
  assert.isTrue(html.startsWith("<!doctype html>\n<html lang=\"en\">"), html.slice(0, 40))
  assert.isTrue(html.trimEnd().endsWith("</html>"))
  assert.notInclude(html.toLowerCase(), "<script")
  assert.notInclude(html.toLowerCase(), "<link")
  assert.notMatch(html, /<[a-z][^>]*\s(src|on[a-z]+)=/i)
  assert.include(html, `content="default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'"`)
}

describe("escapeHtml", () => {
  it("escapes the five significant characters and nothing else", () => {
    assert.strictEqual(
      escapeHtml(`<a href="x">Tom & Jerry's</a> ✓`),
      "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt; ✓"
    )
    assert.strictEqual(escapeHtml("&amp;"), "&amp;amp;")
    assert.strictEqual(escapeHtml("plain text 123"), "plain text 123")
  })
})

describe("formatUsd and formatUtc", () => {
  it("writes micro-USD as dollars with cents, separators and sub-cent digits", () => {
    assert.strictEqual(formatUsd(25_000_000), "$25.00")
    assert.strictEqual(formatUsd(5_000_000), "$5.00")
    assert.strictEqual(formatUsd(1_000_000_000), "$1,000.00")
    assert.strictEqual(formatUsd(1_234_567_890_000), "$1,234,567.89")
    assert.strictEqual(formatUsd(0), "$0.00")
    assert.strictEqual(formatUsd(10_000), "$0.01")
    assert.strictEqual(formatUsd(-11_012), "-$0.011012")
    assert.strictEqual(formatUsd(5_000), "$0.005")
    assert.strictEqual(formatUsd(-2_500_000), "-$2.50")
  })

  it("writes dates in UTC to the minute", () => {
    assert.strictEqual(formatUtc(new Date(Date.UTC(2026, 9, 1, 12, 30, 59))), "2026-10-01 12:30 UTC")
    assert.strictEqual(formatUtc(new Date(Number.NaN)), "unknown")
  })
})

describe("checkoutPage", () => {
  it("open: one POST form with a 'Pay $25.00' button #pay, the amount and the expiry", () => {
    const html = checkoutPage(checkout())
    assertSelfContained(html)
    assert.include(html, `<form method="post" action="/billing/local/checkout/chk_0123456789abcdef0123456789abcdef/pay">`)
    assert.include(html, `<button type="submit" id="pay">Pay $25.00</button>`)
    assert.strictEqual(html.match(/<form\b/g)?.length, 1)
    assert.strictEqual(html.match(/<button\b/g)?.length, 1)
    assert.include(html, `<p class="amount">$25.00</p>`)
    assert.include(html, "<title>Pay $25.00 – Arbiter credit</title>")
    assert.include(html, "2026-10-01 12:30 UTC")
    assert.include(html, "Local test processor")
  })

  it("shows other amounts exactly", () => {
    const html = checkoutPage(checkout({ amountMicros: 1_000_000_000 }))
    assert.include(html, `id="pay">Pay $1,000.00</button>`)
    assert.notInclude(html, "$25.00")
  })

  it("escapes the organization name, the checkout id and the form action", () => {
    const html = checkoutPage(checkout({
      organizationName: HOSTILE,
      checkoutId: `chk_"><script>`,
      formAction: `/pay?next="><script>alert(1)</script>`
    }))
    assertSelfContained(html)
    assert.notInclude(html, "<img")
    assert.include(html, escapeHtml(HOSTILE))
    assert.include(html, `action="/pay?next=&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"`)
    assert.include(html, `value="chk_&quot;&gt;&lt;script&gt;"`)
  })

  it("paid: a confirmation without form or button", () => {
    const html = checkoutPage(checkout({ state: "paid", organizationName: "Acme & Co" }))
    assertSelfContained(html)
    assert.include(html, "<h1>Payment received</h1>")
    assert.include(html, "$25.00 was added to the credit of Acme &amp; Co.")
    assert.notInclude(html, "<form")
    assert.notInclude(html, `id="pay"`)
  })

  it("expired: a notice without form or button", () => {
    const html = checkoutPage(checkout({ state: "expired" }))
    assertSelfContained(html)
    assert.include(html, "<h1>This checkout has expired</h1>")
    assert.include(html, "No payment was taken.")
    assert.notInclude(html, "<form")
    assert.notInclude(html, "<button")
  })
})

describe("portalPage", () => {
  it("shows the balance, the card and one table row per transaction, in the given order", () => {
    const html = portalPage(portal())
    assertSelfContained(html)
    assert.include(html, `<p class="amount" id="balance">$12.34</p>`)
    assert.include(html, "Visa ending in 4242")
    const rows = html.match(/<tbody>([\s\S]*)<\/tbody>/)?.[1]?.match(/<tr>/g)
    assert.strictEqual(rows?.length, 2)
    const usage = html.indexOf("txn_usage_20261001")
    const purchase = html.indexOf("txn_0123456789abcdef0123456789abcdef")
    assert.isTrue(usage > 0 && purchase > usage)
    assert.include(html, `<td class="num debit">-$0.011012</td>`)
    assert.include(html, `<td class="num credit">+$25.00</td>`)
    assert.include(html, "<td>2026-10-01 23:59 UTC</td>")
    assert.include(html, "<td>Usage</td>")
    assert.include(html, "<td>Purchase</td>")
  })

  it("says so when there is no card and no transaction", () => {
    const html = portalPage(portal({ paymentMethod: null, transactions: [], balanceMicros: -20_000 }))
    assert.include(html, "No saved payment method.")
    assert.include(html, `<td colspan="4">No transactions yet.</td>`)
    assert.include(html, `id="balance">-$0.02</p>`)
  })

  it("escapes every interpolated string", () => {
    const html = portalPage(portal({
      organizationName: HOSTILE,
      paymentMethod: { brand: "<b>Visa</b>", last4: `"42"` },
      transactions: [{
        id: "txn_<i>",
        kind: "<kind>",
        amountMicros: 1,
        description: HOSTILE,
        createdAt: new Date(0)
      }]
    }))
    assertSelfContained(html)
    assert.notInclude(html, "<img")
    assert.notInclude(html, "<b>")
    assert.notInclude(html, "<i>")
    assert.notInclude(html, "<kind>")
    assert.include(html, "&lt;b&gt;Visa&lt;/b&gt; ending in &quot;42&quot;")
    assert.include(html, "<td>&lt;kind&gt;</td>")
    assert.include(html, `<title>Billing – ${escapeHtml(HOSTILE)}</title>`)
  })

  it("links back only to an http(s) return URL", () => {
    assert.include(portalPage(portal({ returnUrl: "https://app.arbiter.test/billing?a=1&b=2" })),
      `<a href="https://app.arbiter.test/billing?a=1&amp;b=2">Back to Arbiter</a>`)
    assert.notInclude(portalPage(portal({ returnUrl: "javascript:alert(1)" })), "Back to Arbiter")
    assert.notInclude(portalPage(portal()), "Back to Arbiter")
  })
})
