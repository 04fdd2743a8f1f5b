/**
 * The SQL client (effect/sql's `SqlClient`) over a `pg` pool: every statement of the repositories goes through the
 * same `pg` driver, pool, type parsers and timeouts as the ledger's raw statements (PgPool.ts), with the text
 * protocol and unnamed statements (planned for their values), on PostgreSQL and on the embedded database's socket
 * alike. Statements outside a transaction borrow a pool connection for one query; a transaction (and `reserve`)
 * holds one connection until its scope closes. Each statement's span is `sql.execute` with the statement's text:
 * effect/sql names a span after the database (`db.namespace`, else `server.address`, else `db.system.name`) when the
 * client gives those attributes, so this client gives none of them.
 */
import { Effect, Layer, Scope, Stream } from "effect"
import { Reactivity } from "effect/reactivity/Reactivity"
import * as Reactive from "effect/reactivity/Reactivity"
import { SqlClient } from "effect/sql/SqlClient"
import * as Client from "effect/sql/SqlClient"
import type { Connection } from "effect/sql/SqlConnection"
import type { SqlError } from "effect/sql/SqlError"
import * as Statement from "effect/sql/Statement"
import type pg from "pg"
import { toSqlError } from "./SqlErrors.js"

const escape = Statement.defaultEscape("\"")

/** PostgreSQL's statement compiler: `$n` placeholders, double-quoted identifiers, `VALUES` for record updates. */
const compiler = Statement.makeCompiler({
  dialect: "pg",
  placeholder: (index) => `$${index}`,
  onIdentifier: escape,
  onRecordUpdate: (placeholders, valueAlias, valueColumns, values, returning) => [
    `(values ${placeholders}) AS ${valueAlias}${valueColumns}${returning ? ` RETURNING ${returning[0]}` : ""}`,
    returning ? values.flat().concat(returning[1]) : values.flat()
  ],
  onCustom: () => {
    throw new Error("this SQL client has no custom fragments")
  }
})

type Queryable = pg.Pool | pg.PoolClient

/** One statement on the pool (a connection borrowed for it) or on a held connection. */
const query = <A>(
  on: Queryable,
  config: pg.QueryArrayConfig | string,
  params: ReadonlyArray<unknown>,
  pick: (result: pg.QueryResult) => A
) =>
  Effect.callback<A, SqlError>((resume) => {
    const done = (error: Error | null, result: pg.QueryResult) =>
      resume(error ? Effect.fail(toSqlError(error, "Failed to execute statement")) : Effect.succeed(pick(result)))
    if (typeof config === "string") on.query(config, params as Array<unknown>, done)
    else on.query({ ...config, values: params as Array<unknown> }, done as (error: Error | null, result: pg.QueryArrayResult) => void)
  })

/** Rows of a result; a multi-statement text answers one array of rows per statement. */
const rowsOf = (result: pg.QueryResult | ReadonlyArray<pg.QueryResult>): ReadonlyArray<any> =>
  Array.isArray(result) ? result.map((each: pg.QueryResult) => each.rows ?? []) : (result as pg.QueryResult).rows ?? []

/** A `Connection` over the pool, or over one connection held for a transaction. */
const connectionOn = (on: Queryable): Connection => {
  const execute = (
    sql: string,
    params: ReadonlyArray<unknown>,
    transformRows: (<A extends object>(row: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
  ) => {
    const rows = query(on, sql, params, rowsOf)
    return transformRows === undefined ? rows : Effect.map(rows, transformRows)
  }
  const values = (sql: string, params: ReadonlyArray<unknown>) =>
    query(on, { text: sql, rowMode: "array" }, params, (result) => result.rows as ReadonlyArray<ReadonlyArray<unknown>>)
  return {
    execute,
    executeUnprepared: execute,
    executeRaw: (sql, params) => query(on, sql, params, (result) => result),
    executeValues: values,
    executeValuesUnprepared: values,
    // The whole result is read, then emitted: nothing here streams a result too large to hold.
    executeStream: (sql, params, transformRows) =>
      Stream.unwrap(Effect.map(execute(sql, params, transformRows), (rows) => Stream.fromIterable(rows)))
  }
}

/** A connection of the pool held until the scope closes (released as broken when it failed meanwhile). */
const holdConnection = (pool: pg.Pool): Effect.Effect<Connection, SqlError, Scope.Scope> =>
  Effect.flatMap(
    Effect.acquireRelease(
      Effect.callback<{ client: pg.PoolClient; failure: Error | undefined; onError: (error: Error) => void }, SqlError>(
        (resume) => {
          pool.connect((error, client) => {
            if (error || client === undefined) {
              return resume(Effect.fail(toSqlError(error ?? new Error("no client returned"), "Failed to acquire connection")))
            }
            const held = { client, failure: undefined as Error | undefined, onError: (cause: Error) => void (held.failure = cause) }
            client.on("error", held.onError)
            resume(Effect.succeed(held))
          })
        }
      ),
      (held) =>
        Effect.sync(() => {
          held.client.off("error", held.onError)
          held.client.release(held.failure)
        })
    ),
    (held) => Effect.succeed(connectionOn(held.client))
  )

/** The SQL client over `pool`. */
export const makePgSqlClient = (pool: pg.Pool): Effect.Effect<SqlClient, never, Reactivity> => {
  const shared = connectionOn(pool)
  return Client.make({
    acquirer: Effect.succeed(shared),
    borrower: (f) => f(shared),
    transactionAcquirer: holdConnection(pool),
    compiler,
    driver: "pg",
    spanAttributes: []
  })
}

/** `SqlClient` over `pool` as a layer. */
export const pgSqlClientLayer = (pool: pg.Pool): Layer.Layer<SqlClient> =>
  Layer.effect(SqlClient, makePgSqlClient(pool)).pipe(Layer.provide(Reactive.layer))
