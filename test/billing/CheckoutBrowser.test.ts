/**
 * A credit purchase as a customer makes it: the local checkout page opened in a real headless Chromium (Debian's
 * `chromium`, driven by playwright-core), its one button pressed, the confirmation shown, and the credit on the
 * balance exactly once, even when the confirmation page is submitted again.
 *
 * Chromium is `CHROMIUM_PATH`, else `chromium` (or `chromium-browser`) on the PATH. Without it the test is skipped
 * with the reason, except under `CI=true`, where it fails.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync } from "node:fs"
import { call } from "../support/Api.js"
import { ChromiumMissing, ChromiumPath, skipWithoutChromium, withBrowser } from "../support/Chromium.js"
import { assertMoneyInvariants } from "../support/Invariants.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerOnKnownPortLive } from "../support/TestServer.js"

const TestName = "shows the amount, pays with one button, shows the confirmation; the credit lands once"

if (skipWithoutChromium) {
  describe("checkout in a browser", () => {
    describe("the local checkout page", () => {
      it(TestName, (context) => {
        context.skip(ChromiumMissing)
      })
    })
  })
} else {
  layer(TestServerOnKnownPortLive(), { excludeTestServices: true, timeout: "120 seconds" })("checkout in a browser", (it) => {
    describe("the local checkout page", () => {
      it.effect(TestName, () =>
        Effect.gen(function*() {
          assert.isTrue(existsSync(ChromiumPath), `Chromium is needed at ${ChromiumPath} (apt-get install chromium)`)
          const organization = yield* seedOrganization({ billing: true })
          const checkout = (yield* call("POST", "/v1/billing/checkout", { secret: organization.secret, body: { amount_micros: 42_000_000 } })).json()
          const seen = yield* withBrowser(async (browser) => {
            const page = await browser.newPage()
            await page.goto(checkout.checkout_url)
            const before = await page.textContent("body")
            const button = page.getByRole("button", { name: "Pay $42.00" })
            await button.click()
            await page.waitForLoadState("load")
            const after = await page.textContent("body")
            const payButtons = await page.locator("#pay").count()
            await page.goBack()
            await page.reload()
            const resubmittable = await page.locator("#pay").count()
            return { before, after, payButtons, resubmittable, url: page.url() }
          })
          assert.include(seen.before, "$42.00")
          assert.match(seen.after ?? "", /paid|received|thank/i)
          assert.strictEqual(seen.payButtons, 0)
          assert.strictEqual(seen.resubmittable, 0, "a paid checkout offers no second payment")
          const summary = (yield* call("GET", "/v1/billing", { secret: organization.secret })).json()
          assert.strictEqual(summary.balance_micros, 42_000_000)
          assert.deepStrictEqual(summary.transactions.map((txn: any) => txn.kind), ["purchase"])
          yield* assertMoneyInvariants
        }))
    })
  })
}
