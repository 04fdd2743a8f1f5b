/**
 * The export when PostgreSQL stops answering (runs when TEST_DATABASE_URL is set): before the first byte it is the
 * usual `503 database_unavailable`; after it, the connection is dropped mid-body, so the client sees a broken
 * download rather than a short file that looks whole.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { ServerAddress } from "../../src/server/Listen.js"
import { call, codeOf } from "../support/Api.js"
import { seedOrganization } from "../support/Seed.js"
import { tcpProxy, type TcpProxy } from "../support/TcpProxy.js"
import { databaseMode, freshPostgresDatabase } from "../support/TestDatabase.js"
import { TestServerLive } from "../support/TestServer.js"
import { windowQuery } from "../support/Usage.js"
import { startDownload } from "./Download.js"
import { seedLedgerVolume } from "./LedgerSeed.js"

class Proxy extends Context.Service<Proxy, TcpProxy>()("ExportProxy") {}

const OutageLive = Layer.unwrap(
  Effect.gen(function*() {
    const { url } = yield* freshPostgresDatabase
    const target = new URL(url)
    const proxy = yield* tcpProxy(target.hostname, Number(target.port || 5432))
    target.hostname = "127.0.0.1"
    target.port = String(proxy.port)
    return Layer.merge(TestServerLive({ databaseUrl: Option.some(Redacted.make(target.toString())) }), Layer.succeed(Proxy, proxy))
  })
)

const start = new Date(Math.floor(Date.now() / 1000) * 1000 - 86_400_000)
const window = windowQuery(start, new Date(start.getTime() + 2 * 86_400_000))

describe.skipIf(databaseMode() !== "postgres")("ledger export while the database is away (PostgreSQL)", () => {
  layer(OutageLive, { excludeTestServices: true, timeout: "120 seconds" })((it) => {
    it.effect("GET /v1/usage/export > 503 before the first byte; a dropped connection after it", () =>
      Effect.gen(function*() {
        const proxy = yield* Proxy
        const { organizationId, secret } = yield* seedOrganization()
        yield* seedLedgerVolume(organizationId, {
          runs: 6_000,
          callsPerRun: 10,
          from: start,
          keys: [`key_${"a".repeat(32)}`, `key_${"b".repeat(32)}`],
          idLength: 200
        })
        proxy.cut()
        const down = yield* call("GET", `/v1/usage/export?${window}`, { secret })
        assert.strictEqual(down.status, 503)
        assert.strictEqual(codeOf(down), "database_unavailable")
        proxy.restore()

        const address = yield* ServerAddress
        const download = yield* Effect.retry(
          Effect.flatMap(Effect.sync(() => startDownload(address.url, `/v1/usage/export?${window}`, secret)), (held) =>
            Effect.filterOrFail(Effect.promise(() => held.firstBytes), (head) => head.status === 200, () => "not yet").pipe(
              Effect.as(held)
            )),
          { times: 20 }
        )
        proxy.cut()
        download.resume()
        const outcome = yield* Effect.result(Effect.tryPromise(() => download.done))
        assert.isTrue(outcome._tag === "Failure", "the download must break, not end as if whole")
        proxy.restore()
      }), 120_000)
  })
})
