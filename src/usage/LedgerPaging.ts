/**
 * The ledger's filter and paging parameters beyond the window and `limit` (docs/decisions.md, "Usage by key and
 * model, paging, export"): `key_id` (entries of one key's runs), `offset` (entries skipped, newest first) and
 * `cursor` (the entries after the last one a page showed, newest first by `(created_at, id)`, unaffected by entries
 * recorded since). Each broken rule is `400 invalid_parameter`, the usage routes' answer to a bad parameter value; the
 * boundary has already refused non-whole-number offsets, like limits, with the plain-text query rejection.
 */
import { Result, Option } from "effect"
import { InvalidParameter } from "../../schema/Errors.js"
import { KeyIdPattern } from "../../schema/Ids.js"
import { type CursorListing, decodeCursor, type Keyset } from "../runs/RunView.js"

/** The ledger's cursors: positions of ledger entries (ids are the entries' bigint ids). */
export const LedgerCursor: CursorListing = { name: "ledger", id: /^[1-9][0-9]{0,17}$/ }

/** Where a ledger page starts: after skipping `offset` entries, or just after the entry a cursor names. */
export type LedgerStart =
  | { readonly _tag: "Offset"; readonly offset: number }
  | { readonly _tag: "After"; readonly key: Keyset }

/** Which entries a ledger read returns, from where. */
export interface LedgerQuery {
  /** Only the entries of this key's runs; null for every entry. */
  readonly keyId: string | null
  readonly start: LedgerStart
}

/** The first page of the whole ledger. */
export const WholeLedger: LedgerQuery = { keyId: null, start: { _tag: "Offset", offset: 0 } }

const invalid = (message: string) => Result.fail(new InvalidParameter({ message }))

/** The `key_id` filter: none when absent; a key id (`key_` + 32 hex) otherwise, whoever's key it is. */
export const parseKeyFilter = (keyId: string | undefined): Result.Result<string | null, InvalidParameter> =>
  keyId === undefined
    ? Result.succeed(null)
    : KeyIdPattern.test(keyId)
    ? Result.succeed(keyId)
    : invalid("key_id must be key_ followed by 32 lowercase hex digits")

const parseOffset = (offset: string): Result.Result<LedgerStart, InvalidParameter> => {
  // Number() of a digit string is never NaN (a long one is large or infinite), so the clamp is exact.
  const value = Number(offset)
  return value < 0
    ? invalid("offset must be at least 0")
    : Result.succeed({ _tag: "Offset", offset: Math.min(value, Number.MAX_SAFE_INTEGER) })
}

/**
 * The start of a ledger page: `offset` (default 0; above 2^53 - 1 clamped to it, an empty page) or the position of a
 * `cursor` this organization's ledger issued; both at once, a negative offset or any other cursor is refused.
 */
export const parseLedgerStart = (
  organizationId: string,
  params: { readonly offset?: string | undefined; readonly cursor?: string | undefined }
): Result.Result<LedgerStart, InvalidParameter> => {
  if (params.cursor === undefined) return parseOffset(params.offset ?? "0")
  if (params.offset !== undefined) return invalid("send cursor or offset, not both")
  return Option.match(decodeCursor(LedgerCursor, organizationId, params.cursor), {
    onNone: () => invalid("cursor is not a next_cursor of this organization's ledger"),
    onSome: (key) => Result.succeed({ _tag: "After", key })
  })
}

/** The ledger query of a request: its `key_id` filter, then where its page starts. */
export const parseLedgerQuery = (
  organizationId: string,
  params: {
    readonly key_id?: string | undefined
    readonly offset?: string | undefined
    readonly cursor?: string | undefined
  }
): Result.Result<LedgerQuery, InvalidParameter> =>
  Result.flatMap(
    parseKeyFilter(params.key_id),
    (keyId) => Result.map(parseLedgerStart(organizationId, params), (start) => ({ keyId, start }))
  )
