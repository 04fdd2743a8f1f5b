/**
 * Request ids (spec, "Request ids"): a caller's `x-request-id` matching `^[A-Za-z0-9._-]{1,128}$` is echoed
 * unchanged; anything else is replaced by `req_` + 32 hex, without error.
 */
import { randomUUID } from "node:crypto"

const Valid = /^[A-Za-z0-9._-]{1,128}$/

/** A fresh request id, `req_` + 32 lowercase hex. */
export const newRequestId = (): string => `req_${randomUUID().replace(/-/g, "")}`

/** The request id to use for a request, given the caller's header (if any). */
export const requestIdFor = (given: string | undefined): string =>
  given !== undefined && Valid.test(given) ? given : newRequestId()
