/**
 * A second, fully independent server over the test's database, as another process would be: its own connection
 * pool, admission batches and caches (built with a separate memo map). On PostgreSQL it connects with the same URL;
 * on the embedded database it goes through the owning server's socket, as the CLI does.
 */
import { Context, Effect, Layer, Option, Redacted, type Scope } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { AppConfig } from "../../src/config/AppConfig.js"
import { ownerTarget } from "../../src/db/Embedded.js"
import { pgClientLayer } from "../../src/db/PgPool.js"
import { DatabaseKind } from "../../src/db/Sql.js"
import { ServerAddress } from "../../src/server/Listen.js"
import { HttpLive } from "../../src/Server.js"
import type { DirectRoutesLayer } from "./TestServer.js"

/** Starts another server instance for the life of the current scope; returns its base URL. */
export const startSecondServer = startSecondServerWith({})

/**
 * `startSecondServer` with HttpLive's options (its direct routes), and `extra` provided beside its database and
 * settings (a tracer, say).
 */
export function startSecondServerWith(options: { readonly directRoutes?: DirectRoutesLayer; readonly extra?: Layer.Layer<never> }) {
  return Effect.gen(function*() {
    const config = yield* AppConfig
    const sql = Option.isSome(config.databaseUrl)
      ? pgClientLayer({ url: Redacted.value(config.databaseUrl.value) }, { max: 10 })
      : pgClientLayer(ownerTarget(JSON.parse(readFileSync(join(config.dataDir, "embedded.lock"), "utf8"))), { max: 4 })
    const { extra, ...http } = options
    const layer = HttpLive({ host: "127.0.0.1", port: 0, bootstrap: false, ...http }).pipe(
      Layer.provide(extra ?? Layer.empty),
      Layer.provide(Layer.merge(sql, Layer.succeed(DatabaseKind, Option.isSome(config.databaseUrl) ? "postgres" : "embedded"))),
      Layer.provide(Layer.succeed(AppConfig, config))
    )
    const scope = yield* Effect.scope
    const memoMap = yield* Layer.makeMemoMap
    const context = yield* Layer.buildWithMemoMap(layer, memoMap, scope)
    return Context.get(context, ServerAddress).url
  }).pipe((effect) => effect as Effect.Effect<string, unknown, AppConfig | Scope.Scope>)
}
