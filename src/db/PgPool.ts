/**
 * The `pg` connection pool behind the SQL client, with the options the service needs everywhere: bounded connect and
 * query waits (so a database that stops answering yields `503 database_unavailable` instead of a hung request),
 * TCP keep-alive, and `bigint` columns read as JavaScript numbers (every amount is integer micro-USD, far below 2^53;
 * a value beyond that fails loudly rather than losing precision).
 *
 * A new connection gets `ConnectTimeoutMs` to open; a request waiting for a pooled connection while every one is
 * busy waits up to `QueryTimeoutMs`, as long as a statement may run: a database answering more slowly than requests
 * arrive (a burst on one organization's lock, a machine short of CPU) is busy, not unavailable, and connections come
 * free as their statements end. Such waits past the adaptive limit are the overload guard's to shed, with 503.
 */
import { Context, Effect, Layer } from "effect"
import pg from "pg"
import { pgSqlClientLayer } from "./PgSqlClient.js"
import { toSqlError } from "./SqlErrors.js"

const parseInt8 = (value: string): number => {
  const n = Number(value)
  if (!Number.isSafeInteger(n)) throw new RangeError(`bigint value ${value} is beyond the safe integer range`)
  return n
}

const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === pg.types.builtins.INT8 ? parseInt8 : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser
}

/** Where to connect: a URL, or a host (a Unix socket folder) and port. */
export type PgTarget =
  | { readonly url: string }
  | { readonly host: string; readonly port: number; readonly database: string; readonly user: string }

/**
 * How the URL reaches PostgreSQL: `none`, directly (or through a pooler in session mode); `transaction`, through a
 * pooler in transaction mode (PgBouncer's `pool_mode = transaction`), where consecutive transactions of one client
 * connection may run on different server sessions. There statements go unnamed (a name prepared in one session is
 * unknown to the next; PgBouncer before 1.21 does not track them), and no session setting is sent at connect (PgBouncer
 * refuses the `options` startup parameter, and a setting would stay on a server session other clients share).
 */
export type Pooler = "none" | "transaction"

/** Pool options. */
export interface PgPoolOptions {
  /** Connections this process opens at most, over both pools (`poolSizes`). */
  readonly max: number
  readonly applicationName?: string
  readonly pooler?: Pooler
}

/**
 * How a process's `total` connections are split: a third (rounded up) for the `asyncCommit` pool and the rest for
 * `main`, when there are at least 6 (the admission batches keep two in use); with fewer, or through a transaction
 * pooler (where the pool's session settings cannot be set), one pool serves both.
 */
export const poolSizes = (total: number, pooler: Pooler = "none"): { readonly main: number; readonly asyncCommit: number } => {
  if (total < 6 || pooler === "transaction") return { main: total, asyncCommit: 0 }
  const asyncCommit = Math.ceil(total / 3)
  return { main: total - asyncCommit, asyncCommit }
}

/**
 * The raw `pg` pools under the SQL client, for the ledger's hot statements (prepared once per connection, no
 * per-statement span): `main` commits synchronously; `asyncCommit` runs with `synchronous_commit = off`, for writes
 * that may wait for the next WAL flush (a run's pending row, answered calls): the run's settlement, a synchronous
 * commit, flushes them before any answer depends on them. The embedded database is one session shared by every
 * connection, so there both are the same pool (PGlite has no flush to spare); so they are for a small pool, and
 * through a transaction pooler, whose sessions take no settings of ours (`poolSizes`): those writes then commit
 * synchronously.
 *
 * `asyncCommit` serves only the ledger's admission statements (named, written for their generic plans), so its
 * sessions use the generic plan from the first execution (`plan_cache_mode = force_generic_plan`). Left to choose,
 * PostgreSQL makes at least five custom plans per session and, under load, keeps planning admission's batch
 * statement again at each execution, in the bind step (docs/ledger.md). `main` keeps
 * the default: the SQL client's unnamed statements (the usage queries among them) are planned for their values.
 */
export class PgPools extends Context.Service<PgPools, { readonly main: pg.Pool; readonly asyncCommit: pg.Pool }>()("PgPools") {}

/**
 * Pools and connections that may run named (prepared) statements: all of them, unless through a transaction pooler
 * (`Pooler`), whose server connections change from one transaction to the next. The embedded database is one session
 * behind every connection, whose socket shares the names prepared on it across its connections (PgliteSocket.ts).
 */
export const namedStatementsAllowed = new WeakSet<object>()

/** How long a new connection may take to open. */
const ConnectTimeoutMs = 5_000

/** How long a statement may run, and a request may wait for a pooled connection. */
const QueryTimeoutMs = 20_000

/** A client that opens within `ConnectTimeoutMs`, whatever its pool's wait for a free connection. */
class BoundedConnectClient extends pg.Client {
  constructor(config?: pg.ClientConfig) {
    super({ ...config, connectionTimeoutMillis: ConnectTimeoutMs })
  }
}

const makePool = (target: PgTarget, options: PgPoolOptions, asyncCommit: boolean) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        const pool = new pg.Pool({
          ...("url" in target
            ? { connectionString: target.url }
            : { host: target.host, port: target.port, database: target.database, user: target.user }),
          max: options.max,
          Client: BoundedConnectClient,
          connectionTimeoutMillis: QueryTimeoutMs,
          idleTimeoutMillis: 30_000,
          query_timeout: QueryTimeoutMs,
          keepAlive: true,
          application_name: options.applicationName ?? "arbiter",
          ...(asyncCommit ? { options: "-c synchronous_commit=off -c plan_cache_mode=force_generic_plan" } : {}),
          types
        })
        pool.on("error", () => {})
        if (options.pooler !== "transaction") {
          namedStatementsAllowed.add(pool)
          pool.on("connect", (client) => void namedStatementsAllowed.add(client))
        }
        return pool
      },
      catch: (cause) => toSqlError(cause, "could not create the connection pool")
    }),
    (pool) => Effect.promise(() => pool.end()).pipe(Effect.timeoutOption(2_000))
  )

/** The SQL client (PgSqlClient.ts) and the raw `PgPools`, over pools to the target: `options.max` connections in all. */
export const pgClientLayer = (target: PgTarget, options: PgPoolOptions) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const sizes = "url" in target ? poolSizes(options.max, options.pooler) : { main: options.max, asyncCommit: 0 }
      const main = yield* makePool(target, { ...options, max: sizes.main }, false)
      yield* Effect.tryPromise({
        try: () => main.query("SELECT 1"),
        catch: (cause) => toSqlError(cause, "could not connect to the database")
      })
      const asyncCommit = sizes.asyncCommit > 0 ? yield* makePool(target, { ...options, max: sizes.asyncCommit }, true) : main
      return Layer.merge(
        pgSqlClientLayer(main),
        Layer.succeed(PgPools, { main, asyncCommit })
      )
    })
  )
