/**
 * What a SQL failure means for the caller. The database being unreachable, overloaded, shutting down or timing out
 * is `503 database_unavailable`: the service fails closed and the caller retries. A statement PostgreSQL refused
 * for its data (a value it cannot store, a broken constraint, an error in the statement) is not the database being
 * down: it is a defect of this service (the boundary should have refused the input), so it becomes a logged
 * `500 internal_error` instead of sending the caller to retry a request that can never succeed. The mapping is
 * applied once, at each repository's edge (`orUnavailable` on its statements, `transactionOrUnavailable` on a
 * transaction it owns), so services and the HTTP boundary see the contract's errors only.
 */
import { Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { DatabaseUnavailable } from "../../schema/Errors.js"
import { driverCause, sqlStateOf } from "./SqlErrors.js"

/**
 * SQLSTATE classes of a refused statement (PostgreSQL, Appendix A): cardinality (21), data exception (22),
 * integrity constraint (23), invalid transaction state (25), invalid authorization (28 is a connection matter and
 * is left out), transaction rollback for constraints (40002), syntax or access rule (42), PL/pgSQL raise (P0).
 */
const DataErrorClasses = new Set(["21", "22", "23", "25", "2B", "42", "P0"])


/** Whether a SQL failure is a statement PostgreSQL refused for its data (not the database being unavailable). */
export const isDataError = (error: SqlError): boolean => {
  const state = sqlStateOf(driverCause(error))
  return state !== undefined && (DataErrorClasses.has(state.slice(0, 2)) || state === "40002")
}

/**
 * Whether a SQL failure is a transaction PostgreSQL rolled back to break a conflict with another (a deadlock,
 * 40P01, or a serialization failure, 40001): the database is up and the same work can be done again at once.
 */
export const isTransactionConflict = (error: SqlError): boolean => {
  const state = sqlStateOf(driverCause(error))
  return state === "40P01" || state === "40001"
}

const isSqlError = (error: unknown): error is SqlError =>
  typeof error === "object" && error !== null && (error as { _tag?: unknown })._tag === "SqlError"

/** The contract's answer to a SQL failure: `database_unavailable`, or a defect for a refused statement. */
export const unavailableOrDie = (error: SqlError): Effect.Effect<never, DatabaseUnavailable> =>
  isDataError(error)
    ? Effect.die(error)
    : Effect.andThen(
      Effect.logWarning("database failure", driverCause(error)),
      Effect.fail(new DatabaseUnavailable({ message: "the database is not answering" }))
    )

/** Maps a SQL failure to `database_unavailable` (or, for a statement refused for its data, a defect). */
export const orUnavailable = <A, E, R>(effect: Effect.Effect<A, E | SqlError, R>): Effect.Effect<
  A,
  Exclude<E, SqlError> | DatabaseUnavailable,
  R
> => Effect.catchIf(effect, isSqlError, unavailableOrDie) as any

/**
 * Runs `effect` in one transaction, mapped as `orUnavailable` maps a statement: whatever fails inside, and the
 * transaction's own BEGIN, COMMIT or ROLLBACK (which the SQL client raises as a defect), is `database_unavailable`,
 * or a defect for a statement refused for its data. For a repository that owns a transaction spanning several calls.
 */
export const transactionOrUnavailable = <A, E, R>(
  sql: SqlClient,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, SqlError> | DatabaseUnavailable, R> =>
  orUnavailable(sql.withTransaction(effect)).pipe(
    Effect.catchDefect((defect) => isSqlError(defect) && !isDataError(defect) ? unavailableOrDie(defect) : Effect.die(defect))
  )
