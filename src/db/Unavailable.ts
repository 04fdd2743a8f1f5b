/**
 * Infrastructure failures are typed, never defects: a SQL error becomes `503 database_unavailable` (the service fails
 * closed), logged with its cause for the operator.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { DatabaseUnavailable } from "../../schema/Errors.js"

/** Maps a SQL failure to `database_unavailable`. */
export const orUnavailable = <A, E, R>(effect: Effect.Effect<A, E | SqlError, R>): Effect.Effect<
  A,
  Exclude<E, SqlError> | DatabaseUnavailable,
  R
> =>
  Effect.catchIf(
    effect,
    (error): error is SqlError => typeof error === "object" && error !== null && (error as any)._tag === "SqlError",
    (error) =>
      Effect.zipRight(
        Effect.logWarning("database failure", error.cause),
        Effect.fail(new DatabaseUnavailable({ message: "the database is not answering" }))
      )
  ) as any
