/**
 * Against real PostgreSQL (runs when TEST_DATABASE_URL is set): while the database stops answering, routes that
 * need it answer 503 and `/readyz` answers 503; both recover without a restart once it is back.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted, Schedule } from "effect"
import { ServerAddress } from "../../src/server/Listen.js"
import { call, codeOf } from "../support/Api.js"
import { assertMoneyInvariants } from "../support/Invariants.js"
import { rawRequest } from "../support/RawHttp.js"
import { oneQuestion, postRun } from "../support/Runs.js"
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

const get = (path: string) => Effect.flatMap(ServerAddress, (address) => rawRequest(address.url, { path }))

describe.skipIf(databaseMode() !== "postgres")("database outage (PostgreSQL)", () => {
  layer(OutageLive, { excludeTestServices: true, timeout: "60 seconds" })((it) => {
    it.effect("POST /v1/runs > 503 database_unavailable while the database is away (after the input size check); recovers", () =>
      Effect.gen(function*() {
        const proxy = yield* Proxy
        const organization = yield* seedOrganization()
        assert.strictEqual((yield* postRun(organization.secret, oneQuestion())).status, 200)
        proxy.cut()
        const down = yield* postRun(organization.secret, oneQuestion())
        assert.strictEqual(down.status, 503)
        assert.strictEqual(codeOf(down), "database_unavailable")
        const oversized = yield* postRun(organization.secret, oneQuestion({ state: "x".repeat(1_100_000) }))
        assert.strictEqual(codeOf(oversized), "input_too_large", "6 input size before 7 data store")
        const keys = yield* call("GET", "/v1/keys", { secret: organization.secret })
        assert.strictEqual(keys.status, 503)
        assert.strictEqual(codeOf(keys), "database_unavailable")
        proxy.restore()
        const again = yield* Effect.retry(
          Effect.filterOrFail(postRun(organization.secret, oneQuestion()), (response) => response.status === 200),
          { schedule: Schedule.spaced("100 millis") } // bounded by the test's timeout, however slow the machine
        )
        assert.strictEqual(again.status, 200)
        yield* assertMoneyInvariants
      }))

    it.effect("GET /readyz > 503 while the database is away, 200 again after, without a restart", () =>
      Effect.gen(function*() {
        const proxy = yield* Proxy
        const before = yield* get("/readyz")
        assert.strictEqual(before.status, 200)
        proxy.cut()
        const during = yield* get("/readyz")
        assert.strictEqual(during.status, 503)
        assert.deepStrictEqual(during.json(), {
          status: "unavailable",
          checks: { database: "unavailable", migrations: "unknown" }
        })
        assert.isDefined(during.headers["x-request-id"])
        const live = yield* get("/healthz")
        assert.strictEqual(live.status, 200)
        proxy.restore()
        const recovered = yield* Effect.retry(
          Effect.filterOrFail(get("/readyz"), (response) => response.status === 200),
          { schedule: Schedule.spaced("100 millis") } // bounded by the test's timeout, however slow the machine
        )
        assert.strictEqual(recovered.status, 200)
        const after = yield* get("/readyz")
        assert.strictEqual(after.status, 200)
        assert.strictEqual(after.json().status, "ready")
      }))
  })
})
