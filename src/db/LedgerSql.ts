/**
 * The ledger's statements on the raw `pg` pools (db/PgPool.ts): each named, so PostgreSQL parses and plans it once
 * per connection (on the embedded database, once per session: PgliteSocket.ts shares them across its connections;
 * unnamed through a transaction pooler, db/PgPool.ts), and run without the SQL client's per-statement machinery, on
 * the hot path of every run. Failures
 * are `SqlError`s like the client's, so the one mapping of db/Unavailable.ts applies; a transaction helper keeps a
 * connection for the few multi-statement operations (the exact admission path, lease changes).
 */
import { Effect, type Exit } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import type pg from "pg"
import { namedStatementsAllowed } from "./PgPool.js"
import { toSqlError } from "./SqlErrors.js"

/** A named statement: its text is sent once per connection, then only its name and values. */
export interface Statement {
  readonly name: string
  readonly text: string
}

/** The `SqlError` of a failure of `pg`, as the SQL client's (db/SqlErrors.ts): its reason chosen by the SQLSTATE. */
export const sqlErrorOf: (cause: unknown, message: string) => SqlError = toSqlError

/** The rows of a statement run on a pool (or a connection in a transaction). */
export const query = <Row>(
  on: pg.Pool | pg.PoolClient,
  statement: Statement,
  values: ReadonlyArray<unknown>
): Effect.Effect<ReadonlyArray<Row>, SqlError> =>
  Effect.callback<ReadonlyArray<Row>, SqlError>((resume) => {
    const named = namedStatementsAllowed.has(on)
    const text = { text: statement.text, values: values as Array<unknown> }
    on.query(named ? { name: statement.name, ...text } : text).then(
      (result) => resume(Effect.succeed(result.rows as ReadonlyArray<Row>)),
      (cause) => resume(Effect.fail(sqlErrorOf(cause, `ledger statement ${statement.name} failed`)))
    )
  })

/** A checked-out connection whose link dies between queries emits an error no query hears: it must not crash us. */
const ignoreIdleError = () => {}

const checkOut = (pool: pg.Pool) =>
  Effect.tryPromise({
    try: () => pool.connect().then((client) => client.on("error", ignoreIdleError)),
    catch: (cause) => sqlErrorOf(cause, "could not open a ledger transaction")
  })

/**
 * Gives a connection back: as it is after a success; after a failure or an interruption, rolled back first where a
 * transaction may be open (destroyed when the rollback fails), else destroyed (a late answer must not reach its next
 * user).
 */
const checkIn = (client: pg.PoolClient, exit: Exit.Exit<unknown, unknown>, openTransaction: boolean): Effect.Effect<void> => {
  const release = (destroy: boolean) => {
    client.off("error", ignoreIdleError)
    client.release(destroy)
  }
  if (exit._tag === "Success") return Effect.sync(() => release(false))
  if (!openTransaction) return Effect.sync(() => release(true))
  return Effect.promise(() => client.query("ROLLBACK").then(() => release(false), () => release(true)))
}

/**
 * Opens a ledger transaction. Its named statements use their generic plans (written for them; see `Statement`):
 * left to choose, PostgreSQL plans the lease grant's position read for each organization again at every execution,
 * in the bind step. Same round trip as a bare `BEGIN`. Unnamed statements (through a transaction pooler) keep the
 * default, planned for their values.
 */
const begin = (client: pg.PoolClient) =>
  client.query(namedStatementsAllowed.has(client) ? "BEGIN; SET LOCAL plan_cache_mode = force_generic_plan" : "BEGIN")

/** `body` between `BEGIN` and `COMMIT` on a checked-out connection. */
export const inTransaction = <A, E>(
  client: pg.PoolClient,
  body: Effect.Effect<A, E | SqlError>
): Effect.Effect<A, E | SqlError> =>
  Effect.tryPromise({
    try: () => begin(client),
    catch: (cause) => sqlErrorOf(cause, "could not open a ledger transaction")
  }).pipe(
    Effect.andThen(body),
    Effect.tap(() =>
      Effect.tryPromise({
        try: () => client.query("COMMIT"),
        catch: (cause) => sqlErrorOf(cause, "could not commit a ledger transaction")
      })
    )
  )

/**
 * Runs the work `choose` picks for a connection of the pool, and gives the connection back (`checkIn`): whether the
 * work may leave a transaction open on a failure decides between a rollback and closing the connection.
 */
export const onConnection = <A, E>(
  pool: pg.Pool,
  choose: (client: pg.PoolClient) => { readonly work: Effect.Effect<A, E | SqlError>; readonly openTransaction: boolean }
): Effect.Effect<A, E | SqlError> =>
  Effect.acquireUseRelease(
    Effect.map(checkOut(pool), (client) => ({ client, ...choose(client) })),
    ({ work }) => work,
    ({ client, openTransaction }, exit) => checkIn(client, exit, openTransaction)
  )

/**
 * Runs `body` in one transaction on a connection of the pool: committed when it succeeds, rolled back when it fails
 * or is interrupted, the connection returned either way (destroyed when the rollback itself failed).
 */
export const transaction = <A, E>(
  pool: pg.Pool,
  body: (client: pg.PoolClient) => Effect.Effect<A, E | SqlError>
): Effect.Effect<A, E | SqlError> =>
  onConnection(pool, (client) => ({ work: inTransaction(client, body(client)), openTransaction: true }))
