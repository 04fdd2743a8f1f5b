/**
 * Auto-recharge under concurrent settlements: many runs settling at once push the balance under the threshold many
 * times over, and exactly one recharge is charged and credited; a recharge that leaves the balance still under the
 * threshold is not repeated for the same dip, until credit from elsewhere lifts the balance back to the threshold.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { AutoRecharge } from "../../src/billing/AutoRecharge.js"
import { BillingRepo } from "../../src/billing/BillingRepo.js"
import { ServerAddress } from "../../src/server/Listen.js"
import { call } from "../support/Api.js"
import { assertMoneyInvariants, grantCredit } from "../support/Invariants.js"
import { rawRequest } from "../support/RawHttp.js"
import { freshKey, oneQuestion, postRun } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerOnKnownPortLive } from "../support/TestServer.js"

const rechargesOf = (organizationId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ amount_micros: number }>`SELECT amount_micros FROM credit_transactions
      WHERE organization_id = ${organizationId} AND kind = 'auto_recharge'`)

/** An organization with a saved (local) card: 5 dollars bought through the local checkout page. */
const withSavedCard = Effect.gen(function*() {
  const organization = yield* seedOrganization({ billing: true })
  const checkout = (yield* call("POST", "/v1/billing/checkout", { secret: organization.secret, body: { amount_micros: 5_000_000 } })).json()
  const address = yield* ServerAddress
  const link = new URL(checkout.checkout_url)
  yield* rawRequest(address.url, { method: "POST", path: link.pathname + link.search })
  return organization
})

layer(TestServerOnKnownPortLive(), { excludeTestServices: true, timeout: "120 seconds" })("auto-recharge", (it) => {
  describe("concurrent settlements", () => {
    it.effect("40 runs settling at once under the threshold: exactly one recharge", () =>
      Effect.gen(function*() {
        const organization = yield* withSavedCard
        yield* grantCredit(organization.organizationId, 5_000_020)
        const settings = yield* call("PUT", "/v1/billing/auto-recharge", {
          secret: organization.secret,
          body: { enabled: true, threshold_micros: 10_000_000, amount_micros: 5_000_000 }
        })
        assert.strictEqual(settings.status, 200)
        const responses = yield* Effect.forEach(Array.from({ length: 40 }, () => freshKey()), (key) =>
          postRun(organization.secret, oneQuestion({ state: `ticket ${key}` }), key), { concurrency: "unbounded" })
        assert.isTrue(responses.every((response) => response.status === 200))
        // Waits for the recharge however slow the machine (the test's timeout bounds the wait).
        const recharges = yield* Effect.repeat(rechargesOf(organization.organizationId), {
          schedule: Schedule.spaced("50 millis"),
          until: (rows) => rows.length > 0
        })
        yield* Effect.sleep("300 millis")
        assert.deepStrictEqual((yield* rechargesOf(organization.organizationId)).map((row) => row.amount_micros), [5_000_000])
        assert.strictEqual(recharges.length, 1)
        yield* assertMoneyInvariants
      }))

    it.effect("a recharge that leaves the balance under the threshold is not charged again for the same dip", () =>
      Effect.gen(function*() {
        const organization = yield* withSavedCard
        yield* call("PUT", "/v1/billing/auto-recharge", {
          secret: organization.secret,
          body: { enabled: true, threshold_micros: 50_000_000, amount_micros: 5_000_000 }
        })
        const autoRecharge = yield* AutoRecharge
        assert.strictEqual(yield* autoRecharge.recharge(organization.organizationId), "charged")
        assert.strictEqual(yield* autoRecharge.recharge(organization.organizationId), "not_needed")
        assert.strictEqual((yield* postRun(organization.secret, oneQuestion())).status, 200)
        yield* Effect.sleep("300 millis")
        assert.strictEqual((yield* rechargesOf(organization.organizationId)).length, 1)
        const sql = yield* SqlClient.SqlClient
        const [account] = yield* sql<{ balance_micros: number }>`SELECT balance_micros FROM credit_accounts WHERE organization_id = ${organization.organizationId}`
        yield* grantCredit(organization.organizationId, 50_000_010 - account!.balance_micros)
        yield* (yield* BillingRepo).rearm(organization.organizationId)
        for (let i = 0; i < 3; i++) assert.strictEqual((yield* postRun(organization.secret, oneQuestion({ state: `dip ${i}` }))).status, 200)
        const again = yield* Effect.repeat(rechargesOf(organization.organizationId), {
          schedule: Schedule.spaced("50 millis"),
          until: (rows) => rows.length >= 2
        })
        assert.strictEqual(again.length, 2, "re-armed by credit from elsewhere, the next dip is recharged")
        yield* assertMoneyInvariants
      }))
  })
})
