/**
 * A `pg` failure as effect/sql's `SqlError`: its reason chosen by the SQLSTATE PostgreSQL sent (a connection, an
 * authentication, a syntax or access rule, a constraint, a deadlock, a serialization failure, a lock or statement
 * timeout), the `pg` error itself kept as the reason's cause, where db/Unavailable.ts reads the SQLSTATE again. A
 * failure without one (a refused or dropped connection, a client timeout) is a connection failure.
 */
import {
  AuthenticationError,
  AuthorizationError,
  ConnectionError,
  ConstraintError,
  DeadlockError,
  LockTimeoutError,
  SerializationError,
  SqlError,
  type SqlErrorReason,
  SqlSyntaxError,
  StatementTimeoutError,
  UniqueViolation,
  UnknownError
} from "effect/sql/SqlError"

/** The SQLSTATE of a failure (`code`, five digits or capitals), if it has one. */
export const sqlStateOf = (cause: unknown): string | undefined => {
  const code = (cause as { code?: unknown } | null)?.code
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined
}

const reasonOf = (cause: unknown, message: string): SqlErrorReason => {
  const props = { cause, message }
  const state = sqlStateOf(cause)
  if (state === undefined) return new ConnectionError(props)
  if (state.startsWith("08")) return new ConnectionError(props)
  if (state.startsWith("28")) return new AuthenticationError(props)
  if (state === "42501") return new AuthorizationError(props)
  if (state.startsWith("42")) return new SqlSyntaxError(props)
  if (state === "23505") {
    const constraint = (cause as { constraint?: unknown }).constraint
    return new UniqueViolation({ ...props, constraint: typeof constraint === "string" && constraint !== "" ? constraint : "unknown" })
  }
  if (state.startsWith("23")) return new ConstraintError(props)
  if (state === "40P01") return new DeadlockError(props)
  if (state === "40001") return new SerializationError(props)
  if (state === "55P03") return new LockTimeoutError(props)
  if (state === "57014") return new StatementTimeoutError(props)
  return new UnknownError(props)
}

/** `cause` (a `pg` error, or any failure of the driver) as a `SqlError` saying `message`. */
export const toSqlError = (cause: unknown, message: string): SqlError => new SqlError({ reason: reasonOf(cause, message) })

/** The failure under a `SqlError`: the driver's error its reason was made from. */
export const driverCause = (error: SqlError): unknown => error.reason.cause
