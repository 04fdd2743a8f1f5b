/**
 * The service as separate processes, exactly as `npm start` runs it, over one fresh test database, with the test's
 * own connection to that database and the directory services (organizations, keys, credit) to seed it through. A
 * child keeps its own event loop, so what a test measures of it (latency, blocking) is the service's alone; several
 * children share the database as several machines would (PostgreSQL only: the embedded database has one owner, the
 * first child, which the test reaches through its socket as the operator CLI does).
 */
import { ConfigProvider, Context, Effect, Layer, Option, Redacted } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { AppConfig, type Settings } from "../../src/config/AppConfig.js"
import { ownerTarget } from "../../src/db/Embedded.js"
import { pgClientLayer } from "../../src/db/PgPool.js"
import { DatabaseKind } from "../../src/db/Sql.js"
import { DirectoryLive } from "../../src/Services.js"
import { ServerAddress } from "../../src/server/Listen.js"
import { type Child, startNode } from "../../bench/support/Processes.js"
import { startPgBouncer } from "./PgBouncer.js"
import { type TcpProxy, tcpProxy } from "./TcpProxy.js"
import { freshDatabaseSettings } from "./TestDatabase.js"

/** The running children, in start order. */
export class ChildServers extends Context.Service<ChildServers, ReadonlyArray<Child>>()("test/ChildServers") {}

/** The `DATABASE_URL` the children were given (through the proxy or PgBouncer when asked for); none on PGlite. */
export class ChildDatabaseUrl extends Context.Service<ChildDatabaseUrl, string | undefined>()("test/ChildDatabaseUrl") {}

/** The TCP proxy the children reach PostgreSQL through, when asked for (`viaProxy`). */
export class DatabaseProxy extends Context.Service<DatabaseProxy, TcpProxy>()("test/DatabaseProxy") {}

/**
 * Options of the children: how many, settings as environment variables (merged over the test defaults), and whether
 * they reach PostgreSQL through a proxy the test can cut or through PgBouncer (the test's own connection stays
 * direct).
 */
export interface ChildServerOptions {
  readonly count?: number
  readonly env?: Readonly<Record<string, string>>
  readonly viaProxy?: boolean
  /** The children reach PostgreSQL through a PgBouncer of the test's own in transaction mode (`DATABASE_POOLER`). */
  readonly viaPgBouncer?: boolean
}

const noProxy: TcpProxy = {
  port: 0,
  cut: () => {
    throw new Error("these children reach PostgreSQL directly: start them with viaProxy")
  },
  restore: () => {}
}

const databaseEnv = (settings: Partial<Settings>): Record<string, string> =>
  Option.match(settings.databaseUrl ?? Option.none(), {
    onNone: () => ({ DATA_DIR: settings.dataDir! }),
    onSome: (url) => ({ DATABASE_URL: Redacted.value(url), DATA_DIR: settings.dataDir! })
  })

/**
 * Children over a fresh database, plus `ServerAddress` (the first child, so `call` and `postRun` reach it), the SQL
 * client and the directory services over the same database, and the test's `AppConfig`.
 */
export const ChildServersLive = (options: ChildServerOptions = {}) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const settings = yield* freshDatabaseSettings
      const postgres = Option.isSome(settings.databaseUrl)
      const count = postgres ? options.count ?? 1 : 1
      const env: Record<string, string> = {
        LOG_LEVEL: "warn",
        BILLING_PROVIDER: "local",
        OVERLOAD_MAX_LAG_MS: "0",
        RUNS_MAX_IN_FLIGHT: "0",
        WORKERS: "1",
        ...databaseEnv(settings),
        ...options.env
      }
      const proxy = postgres && options.viaProxy === true
        ? yield* Effect.gen(function*() {
          const direct = new URL(env.DATABASE_URL!)
          const made = yield* tcpProxy(direct.hostname, Number(direct.port || 5432))
          direct.hostname = "127.0.0.1"
          direct.port = String(made.port)
          env.DATABASE_URL = direct.toString()
          return made
        })
        : undefined
      if (postgres && options.viaPgBouncer === true) {
        const bouncer = yield* startPgBouncer(env.DATABASE_URL!)
        env.DATABASE_URL = bouncer.through(env.DATABASE_URL!)
        env.DATABASE_POOLER = "transaction"
      }
      const children: Array<Child> = []
      for (let index = 0; index < count; index++) {
        children.push(yield* Effect.acquireRelease(
          Effect.promise(() => startNode("src/main.ts", env, "/readyz")),
          (child) => Effect.promise(child.stop)
        ))
      }
      const target = postgres
        ? { url: Redacted.value(Option.getOrThrow(settings.databaseUrl)) }
        : ownerTarget(JSON.parse(readFileSync(join(settings.dataDir, "embedded.lock"), "utf8")))
      const first = new URL(children[0]!.url)
      const config = AppConfig.layerWith({ ...settings, billingProviderChosen: true })
      return Layer.mergeAll(
        DirectoryLive.pipe(Layer.provideMerge(pgClientLayer(target, { max: 4 }))),
        Layer.succeed(DatabaseKind, postgres ? "postgres" : "embedded"),
        Layer.succeed(ChildServers, children),
        Layer.succeed(DatabaseProxy, proxy ?? noProxy),
        Layer.succeed(ChildDatabaseUrl, env.DATABASE_URL),
        Layer.succeed(ServerAddress, { host: first.hostname, port: Number(first.port), url: children[0]!.url })
      ).pipe(Layer.provideMerge(config))
    })
  ).pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({}))))
