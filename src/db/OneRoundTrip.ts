/**
 * Several named statements as one transaction in one round trip. PostgreSQL's extended protocol runs every statement
 * sent before a `Sync` in one implicit transaction, committed at the `Sync` (rolled back if any statement fails, the
 * rest skipped), each statement with a snapshot of its own (READ COMMITTED), as if they were sent one by one between
 * `BEGIN` and `COMMIT`. Sending them at once saves three round trips (`BEGIN`, a statement, `COMMIT`); at one run
 * in flight each round trip wakes PostgreSQL and then the service.
 *
 * `pg` ends each statement with its own `Sync`, so a query of this module's own (`pg.Query` with its `prepare` step
 * replaced) writes them. It binds only statements the connection has prepared already: a connection that has not
 * (a new one) runs them the usual way, between `BEGIN` and `COMMIT`, which prepares them for the next time. Through a
 * transaction pooler (no named statements) they always go the usual way. Inside a transaction already open
 * (`stepsInTransaction`), the same round trip runs statements that need no answer of the one before them.
 */
import { Effect } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import pg from "pg"
import { prepareValue } from "pg/lib/utils.js"
import { namedStatementsAllowed } from "./PgPool.js"
import { inTransaction, onConnection, query, sqlErrorOf, type Statement } from "./LedgerSql.js"

/** A statement with its values. */
export interface Step {
  readonly statement: Statement
  readonly values: ReadonlyArray<unknown>
}

/** The part of `pg`'s connection this module uses (internal to `pg`, not in its type declarations). */
interface Wire {
  readonly parsedStatements: Record<string, string | undefined>
  bind(config: { portal: string; statement: string; values: ReadonlyArray<string | Buffer | null> }): void
  describe(config: { type: "P"; name: string }): void
  execute(config: { portal: string; rows: number }): void
  sync(): void
}

/** What `pg.Query` hands its callback: a result, or one per statement when there are several. */
interface ResultLike {
  readonly rows: ReadonlyArray<unknown>
}

type Bound = ReadonlyArray<{ readonly name: string; readonly values: ReadonlyArray<string | Buffer | null> }>

/** A `pg.Query` that writes each step's Bind, Describe and Execute, then one Sync. */
class StepsQuery extends pg.Query {
  constructor(
    private readonly steps: Bound,
    text: string,
    callback: (error: Error | undefined, result: ResultLike | ReadonlyArray<ResultLike>) => void
  ) {
    super({ text, queryMode: "extended" } as pg.QueryConfig, callback as never)
  }

  /** Takes the place of `pg.Query`'s own step (called by its `submit`, between the stream's cork and uncork). */
  prepare(connection: Wire): void {
    for (const step of this.steps) {
      connection.bind({ portal: "", statement: step.name, values: step.values })
      connection.describe({ type: "P", name: "" })
      connection.execute({ portal: "", rows: 0 })
    }
    connection.sync()
  }
}

/** Whether every step can be bound on this connection without preparing it first. */
const preparedOn = (client: pg.PoolClient, steps: ReadonlyArray<Step>) => {
  if (!namedStatementsAllowed.has(client)) return false
  const parsed = (client as unknown as { readonly connection: Wire }).connection.parsedStatements
  return steps.every((step) => parsed[step.statement.name] === step.statement.text)
}

const failure = (steps: ReadonlyArray<Step>, cause: unknown) =>
  sqlErrorOf(cause, `ledger statements ${steps.map((step) => step.statement.name).join(", ")} failed`)

/** The rows of each step, in order. */
const rowsOf = (result: ResultLike | ReadonlyArray<ResultLike>, count: number) => {
  const results: ReadonlyArray<ResultLike> = Array.isArray(result) ? result : [result as ResultLike]
  if (results.length !== count) throw new Error(`${count} statements answered ${results.length} results`)
  return results.map((each) => each.rows)
}

/** The steps in one round trip (values mapped as `pg` maps them, before anything is written). */
const sendSteps = (client: pg.PoolClient, steps: ReadonlyArray<Step>) =>
  Effect.callback<ReadonlyArray<ReadonlyArray<unknown>>, SqlError>((resume) => {
    let bound: Bound
    try {
      bound = steps.map((step) => ({ name: step.statement.name, values: step.values.map(prepareValue) }))
    } catch (cause) {
      resume(Effect.fail(failure(steps, cause)))
      return
    }
    client.query(new StepsQuery(bound, steps[0]!.statement.text, (error, result) => {
      if (error) return resume(Effect.fail(failure(steps, error)))
      try {
        resume(Effect.succeed(rowsOf(result, steps.length)))
      } catch (cause) {
        resume(Effect.fail(failure(steps, cause)))
      }
    }))
  })

/**
 * Runs `steps` in order as one transaction on a connection of `pool` (in one round trip where the connection has
 * prepared them all, else between `BEGIN` and `COMMIT`, which prepares them) and gives the rows of each, in order. A
 * failure rolls them all back: the one round trip's at its `Sync`, after which the connection is closed rather than
 * returned (a late answer must not reach its next user); the usual way's with `ROLLBACK`, as `transaction` does (the
 * embedded database's connections share one session).
 */
export const inOneTransaction = (
  pool: pg.Pool,
  steps: ReadonlyArray<Step>
): Effect.Effect<ReadonlyArray<ReadonlyArray<unknown>>, SqlError> =>
  onConnection(pool, (client) =>
    preparedOn(client, steps)
      ? { work: sendSteps(client, steps), openTransaction: false }
      : {
        work: inTransaction(client, Effect.forEach(steps, (step) => query(client, step.statement, step.values))),
        openTransaction: true
      })

/**
 * Runs `steps` in order on a connection whose transaction is open (`inTransaction`), in one round trip where the
 * connection has prepared them all, else one by one (which prepares them), and gives the rows of each, in order. The
 * `Sync` ends no transaction opened with `BEGIN`. Each statement starts once the one before it has finished, with a
 * snapshot of its own (READ COMMITTED), as when they are sent one by one: a read after a lock sees what the lock's
 * previous holder committed. A failure leaves the transaction failed, for the caller's rollback, which `pg` sends
 * only once PostgreSQL has answered the whole round trip.
 */
export const stepsInTransaction = (
  client: pg.PoolClient,
  steps: ReadonlyArray<Step>
): Effect.Effect<ReadonlyArray<ReadonlyArray<unknown>>, SqlError> =>
  preparedOn(client, steps)
    ? sendSteps(client, steps)
    : Effect.forEach(steps, (step) => query(client, step.statement, step.values))
