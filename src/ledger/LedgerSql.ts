/**
 * The ledger's statements on the raw `pg` pools (db/PgPool.ts): each named, so PostgreSQL parses and plans it once
 * per connection (not on the embedded database, one session behind every connection), and run without the SQL client's per-statement machinery, on the hot path of every run. Failures
 * are `SqlError`s like the client's, so the one mapping of db/Unavailable.ts applies; a transaction helper keeps a
 * connection for the few multi-statement operations (the exact admission path, lease changes).
 */
import { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type pg from "pg"
import { namedStatementsAllowed } from "../db/PgPool.js"

/** A named statement: its text is sent once per connection, then only its name and values. */
export interface Statement {
  readonly name: string
  readonly text: string
}

/** The rows of a statement run on a pool (or a connection in a transaction). */
export const query = <Row>(
  on: pg.Pool | pg.PoolClient,
  statement: Statement,
  values: ReadonlyArray<unknown>
): Effect.Effect<ReadonlyArray<Row>, SqlError> =>
  Effect.async<ReadonlyArray<Row>, SqlError>((resume) => {
    const named = namedStatementsAllowed.has(on)
    on.query(named ? { name: statement.name, text: statement.text, values: values as Array<unknown> } : { text: statement.text, values: values as Array<unknown> }).then(
      (result) => resume(Effect.succeed(result.rows as ReadonlyArray<Row>)),
      (cause) => resume(Effect.fail(new SqlError({ cause, message: `ledger statement ${statement.name} failed` })))
    )
  })

/** A checked-out connection whose link dies between queries emits an error no query hears: it must not crash us. */
const ignoreIdleError = () => {}

/**
 * Runs `body` in one transaction on a connection of the pool: committed when it succeeds, rolled back when it fails
 * or is interrupted, the connection returned either way (destroyed when the rollback itself failed).
 */
export const transaction = <A, E>(
  pool: pg.Pool,
  body: (client: pg.PoolClient) => Effect.Effect<A, E | SqlError>
): Effect.Effect<A, E | SqlError> =>
  Effect.acquireUseRelease(
    Effect.tryPromise({
      try: async () => {
        const client = await pool.connect()
        client.on("error", ignoreIdleError)
        try {
          await client.query("BEGIN")
        } catch (error) {
          client.off("error", ignoreIdleError)
          client.release(true)
          throw error
        }
        return client
      },
      catch: (cause) => new SqlError({ cause, message: "could not open a ledger transaction" })
    }),
    (client) =>
      Effect.flatMap(body(client), (result) =>
        Effect.tryPromise({
          try: () => client.query("COMMIT"),
          catch: (cause) => new SqlError({ cause, message: "could not commit a ledger transaction" })
        }).pipe(Effect.as(result))),
    (client, exit) => {
      const release = (destroy: boolean) => {
        client.off("error", ignoreIdleError)
        client.release(destroy)
      }
      return exit._tag === "Success"
        ? Effect.sync(() => release(false))
        : Effect.promise(() => client.query("ROLLBACK").then(() => release(false), () => release(true)))
    }
  )
