/**
 * Identifiers of the contract (spec, "Identifiers and formats"): opaque strings with a typed prefix. Run ids have
 * two spellings that every route accepts: `run_` + 32 hex, and `run_` + the hyphenated UUID.
 */
import { Schema } from "effect"

/** A key id: `key_` + 32 hex. */
export const KeyIdPattern = /^key_[0-9a-f]{32}$/

/** An organization id (opaque; this service mints `org_` + 32 hex). */
export const OrganizationId = Schema.String.annotate({ description: "organization id (opaque)" })

/** A timestamp on the wire: `YYYY-MM-DDTHH:MM:SSZ`, UTC, second precision. */
export const Timestamp = Schema.String.annotate({
  description: "UTC timestamp, second precision: YYYY-MM-DDTHH:MM:SSZ",
  examples: ["2026-09-25T12:00:00Z"]
})

/** Formats a date as the contract's timestamp. */
export const formatTimestamp = (date: Date): string => date.toISOString().slice(0, 19) + "Z"
