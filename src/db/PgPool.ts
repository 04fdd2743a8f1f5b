/**
 * The `pg` connection pool behind the SQL client, with the options the service needs everywhere: bounded connect and
 * query waits (so a database that stops answering yields `503 database_unavailable` instead of a hung request),
 * TCP keep-alive, and `bigint` columns read as JavaScript numbers (every amount is integer micro-USD, far below 2^53;
 * a value beyond that fails loudly rather than losing precision).
 */
import { PgClient } from "@effect/sql-pg"
import { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import pg from "pg"

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

/** Pool options. */
export interface PgPoolOptions {
  readonly max: number
  readonly applicationName?: string
}

/** A PgClient layer (also providing SqlClient) over a pool to the target. */
export const pgClientLayer = (target: PgTarget, options: PgPoolOptions) =>
  PgClient.layerFromPool({
    acquire: Effect.acquireRelease(
      Effect.try({
        try: () => {
          const pool = new pg.Pool({
            ...("url" in target
              ? { connectionString: target.url }
              : { host: target.host, port: target.port, database: target.database, user: target.user }),
            max: options.max,
            connectionTimeoutMillis: 5_000,
            idleTimeoutMillis: 30_000,
            query_timeout: 20_000,
            keepAlive: true,
            application_name: options.applicationName ?? "arbiter",
            types
          })
          pool.on("error", () => {})
          return pool
        },
        catch: (cause) => new SqlError({ cause, message: "could not create the connection pool" })
      }),
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.timeoutOption(2_000))
    ).pipe(
      Effect.tap((pool) =>
        Effect.tryPromise({
          try: () => pool.query("SELECT 1"),
          catch: (cause) => new SqlError({ cause, message: "could not connect to the database" })
        })
      )
    ),
    applicationName: options.applicationName ?? "arbiter",
    types
  })
