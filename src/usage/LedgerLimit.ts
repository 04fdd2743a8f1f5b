/**
 * The ledger's `limit` (spec, Limits: 1 to 200, default 50, above 200 clamped, 0 refused; decisions.md: below 1 is
 * `400 invalid_parameter`). The boundary has already refused anything that is not a whole number (the plain-text
 * query rejection), so any digit string arrives here, however long.
 */
import { Result } from "effect"
import { InvalidParameter } from "../../schema/Errors.js"

/** Entries when no `limit` is sent. */
export const DEFAULT_LEDGER_LIMIT = 50

/** Most entries one ledger page holds; larger limits are clamped to it. */
export const MAX_LEDGER_LIMIT = 200

/** The effective limit of a ledger query, or `invalid_parameter` when it is below 1. */
export const parseLedgerLimit = (limit: string | undefined): Result.Result<number, InvalidParameter> => {
  if (limit === undefined) return Result.succeed(DEFAULT_LEDGER_LIMIT)
  // Number() of a long digit string is a large (or infinite) number, never NaN, so clamping stays exact.
  const value = Number(limit)
  return value < 1
    ? Result.fail(new InvalidParameter({ message: "limit must be at least 1 (it is clamped to 200 above)" }))
    : Result.succeed(Math.min(value, MAX_LEDGER_LIMIT))
}
