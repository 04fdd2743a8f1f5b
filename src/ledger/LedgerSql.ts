/**
 * The ledger's statements on the raw `pg` pools (db/PgPool.ts): each named, so PostgreSQL parses and plans it once
 * per connection (not on the embedded database, one session behind every connection), and run without the SQL client's per-statement machinery, on the hot path of every run. Failures
 * are `SqlError`s like the client's, so the one mapping of db/Unavailable.ts applies; a transaction helper keeps a
 * connection for the few multi-statement operations (the exact admission path, lease changes).
 */
import { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type pg from "pg"
import { namedStatementsAllowed, pipelinedPools } from "../db/PgPool.js"

/** A named statement: its text is sent once per connection, then only its name and values. */
export interface Statement {
  readonly name: string
  readonly text: string
}

const queryConfig = (on: pg.Pool | pg.PoolClient, statement: Statement, values: ReadonlyArray<unknown>) =>
  namedStatementsAllowed.has(on)
    ? { name: statement.name, text: statement.text, values: values as Array<unknown> }
    : { text: statement.text, values: values as Array<unknown> }

/** The rows of a statement run on a pool (or a connection in a transaction). */
export const query = <Row>(
  on: pg.Pool | pg.PoolClient,
  statement: Statement,
  values: ReadonlyArray<unknown>
): Effect.Effect<ReadonlyArray<Row>, SqlError> =>
  Effect.async<ReadonlyArray<Row>, SqlError>((resume) => {
    on.query(queryConfig(on, statement, values)).then(
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

/** A statement of a pipelined transaction, with its values. */
export interface Step {
  readonly statement: Statement
  readonly values: ReadonlyArray<unknown>
}

/** The socket under a `pg` connection, to write a whole pipeline at once. */
const socketOf = (client: pg.PoolClient): { cork(): void; uncork(): void } | undefined =>
  (client as unknown as { connection?: { stream?: { cork(): void; uncork(): void } } }).connection?.stream

const sendPipeline = (client: pg.PoolClient, steps: ReadonlyArray<Step>) => {
  const socket = socketOf(client)
  socket?.cork()
  try {
    const begin = client.query("BEGIN")
    const results = steps.map((step) => client.query(queryConfig(client, step.statement, step.values)))
    const commit = client.query("COMMIT")
    return { begin, results, commit }
  } finally {
    socket?.uncork()
  }
}

/**
 * Runs the steps in order in one transaction written at once on a connection of a pipelining pool (db/PgPool.ts):
 * BEGIN, the statements and COMMIT leave in one write and are answered in one round trip, each statement still
 * seeing what the ones before it did. A statement PostgreSQL refuses aborts the transaction (the statements after it
 * fail, the COMMIT rolls back) and the whole fails with that statement's error. On a pool that does not pipeline (the
 * embedded database), the same transaction, one statement after another. Returns each step's rows.
 */
export const pipelinedTransaction = (
  pool: pg.Pool,
  steps: ReadonlyArray<Step>
): Effect.Effect<ReadonlyArray<ReadonlyArray<unknown>>, SqlError> =>
  !pipelinedPools.has(pool)
    ? transaction(pool, (client) => Effect.forEach(steps, (step) => query<unknown>(client, step.statement, step.values)))
    : Effect.async<ReadonlyArray<ReadonlyArray<unknown>>, SqlError>((resume) => {
      pool.connect().then(
        (client) => {
          client.on("error", ignoreIdleError)
          const { begin, results, commit } = sendPipeline(client, steps)
          void Promise.allSettled([begin, ...results, commit]).then((settled) => {
            const ended = settled[settled.length - 1]!
            // A refused statement leaves the connection usable (its COMMIT rolled back); a lost one is dropped.
            client.off("error", ignoreIdleError)
            client.release(ended.status === "rejected")
            const failed = settled.findIndex((outcome) => outcome.status === "rejected")
            if (failed >= 0) {
              const name = failed === 0 ? "BEGIN" : failed > steps.length ? "COMMIT" : steps[failed - 1]!.statement.name
              const cause = (settled[failed] as PromiseRejectedResult).reason
              return resume(Effect.fail(new SqlError({ cause, message: `ledger statement ${name} failed` })))
            }
            if ((ended as PromiseFulfilledResult<pg.QueryResult>).value.command !== "COMMIT") {
              return resume(Effect.fail(new SqlError({ cause: ended, message: "the ledger transaction rolled back" })))
            }
            resume(Effect.succeed(
              settled.slice(1, -1).map((outcome) => (outcome as PromiseFulfilledResult<pg.QueryResult>).value.rows)
            ))
          })
        },
        (cause) => resume(Effect.fail(new SqlError({ cause, message: "could not open a ledger transaction" })))
      )
    })
