/**
 * Against real PostgreSQL (runs when TEST_DATABASE_URL is set): while the database stops answering, the billing
 * routes and the billing pages outside the API (the local checkout, the portal, the return page) answer
 * `503 database_unavailable`, mapped at billing's repository edge (the HTTP boundary holds no SQL handling); they
 * recover without a restart, and a purchase then completes once. A transaction whose commit fails (the SQL client
 * raises that as a defect) is `database_unavailable` too, at the edge of the repository that owns it.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted, Schedule } from "effect"
import { DatabaseUnavailable } from "../../schema/Errors.js"
import { BillingRepo } from "../../src/billing/BillingRepo.js"
import { ServerAddress } from "../../src/server/Listen.js"
import { OrganizationsRepo } from "../../src/organizations/OrganizationsRepo.js"
import { call, codeOf } from "../support/Api.js"
import { assertMoneyInvariants } from "../support/Invariants.js"
import { rawRequest } from "../support/RawHttp.js"
import { seedOrganization } from "../support/Seed.js"
import { tcpProxy, type TcpProxy } from "../support/TcpProxy.js"
import { databaseMode, freshPostgresDatabase } from "../support/TestDatabase.js"
import { TestServerLive } from "../support/TestServer.js"

class Proxy extends Context.Service<Proxy, TcpProxy>()("Proxy") {}

const OutageLive = Layer.unwrap(
  Effect.gen(function*() {
    const { url } = yield* freshPostgresDatabase
    const target = new URL(url)
    const proxy = yield* tcpProxy(target.hostname, Number(target.port || 5432))
    target.hostname = "127.0.0.1"
    target.port = String(proxy.port)
    return Layer.merge(
      TestServerLive({ databaseUrl: Option.some(Redacted.make(target.toString())) }),
      Layer.succeed(Proxy, proxy)
    )
  })
)

const page = (url: string, method = "GET") =>
  Effect.flatMap(ServerAddress, (address) => {
    const link = new URL(url, address.url)
    return rawRequest(address.url, { method, path: link.pathname + link.search })
  })

describe.skipIf(databaseMode() !== "postgres")("billing during a database outage (PostgreSQL)", () => {
  layer(OutageLive, { excludeTestServices: true, timeout: "60 seconds" })((it) => {
    it.effect("the billing routes and pages > 503 database_unavailable while the database is away; recover", () =>
      Effect.gen(function*() {
        const proxy = yield* Proxy
        const { secret } = yield* seedOrganization({ billing: true })
        const checkout = yield* call("POST", "/v1/billing/checkout", { secret, body: { amount_micros: 25_000_000 } })
        assert.strictEqual(checkout.status, 200, checkout.text)
        const { checkout_id: checkoutId, checkout_url: checkoutUrl } = checkout.json()
        const portal = yield* call("POST", "/v1/billing/portal", { secret })
        assert.strictEqual(portal.status, 200, portal.text)
        proxy.cut()
        const during = {
          "GET /v1/billing": yield* call("GET", "/v1/billing", { secret }),
          "POST /v1/billing/checkout": yield* call("POST", "/v1/billing/checkout", { secret, body: { amount_micros: 25_000_000 } }),
          "GET the local checkout": yield* page(checkoutUrl),
          "POST the local checkout": yield* page(checkoutUrl, "POST"),
          "GET the portal": yield* page(portal.json().portal_url),
          "GET /billing/return": yield* page(`/billing/return?checkout_id=${checkoutId}&result=paid`)
        }
        for (const [name, response] of Object.entries(during)) {
          assert.strictEqual(response.status, 503, `${name}: ${response.text}`)
          assert.strictEqual(codeOf(response), "database_unavailable", name)
          assert.isDefined(response.headers["x-request-id"], name)
        }
        proxy.restore()
        const again = yield* Effect.retry(
          Effect.filterOrFail(call("GET", "/v1/billing", { secret }), (response) => response.status === 200),
          { schedule: Schedule.spaced("100 millis") } // bounded by the test's timeout, however slow the machine
        )
        assert.strictEqual(again.json().balance_micros, 0)
        assert.strictEqual((yield* page(checkoutUrl, "POST")).status, 200)
        assert.strictEqual((yield* page(checkoutUrl, "POST")).status, 200)
        const after = (yield* call("GET", "/v1/billing", { secret })).json()
        assert.strictEqual(after.balance_micros, 25_000_000, "credited once")
        yield* assertMoneyInvariants
      }))

    it.effect("a transaction whose commit fails > database_unavailable, not a defect", () =>
      Effect.gen(function*() {
        const proxy = yield* Proxy
        const organizations = yield* OrganizationsRepo
        const billing = yield* BillingRepo
        const { organizationId } = yield* seedOrganization()
        for (const transaction of [organizations.transaction, billing.transaction]) {
          const failure = yield* Effect.flip(transaction(Effect.gen(function*() {
            yield* billing.rearm(organizationId)
            proxy.cut()
          })))
          proxy.restore()
          assert.instanceOf(failure, DatabaseUnavailable)
        }
        const stored = yield* Effect.retry(organizations.getOrganization(organizationId), {
          times: 20,
          schedule: Schedule.spaced("100 millis")
        })
        assert.isTrue(Option.isSome(stored), "the database answers again")
      }))
  })
})
