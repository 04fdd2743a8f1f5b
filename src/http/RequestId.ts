/**
 * Request ids (spec, "Request ids"): a caller's `x-request-id` matching `^[A-Za-z0-9._-]{1,128}$` is echoed
 * unchanged; anything else is replaced by `req_` + 32 lowercase hex, without error.
 */
import { randomUUID } from "node:crypto"

const Valid = /^[A-Za-z0-9._-]{1,128}$/

/** The request id to use for a request, given the caller's header (if any; the first, if repeated). */
export const requestIdFor = (header: string | ReadonlyArray<string> | undefined): string => {
  const given = typeof header === "string" ? header : header?.[0]
  return given !== undefined && Valid.test(given) ? given : `req_${randomUUID().replace(/-/g, "")}`
}
