/**
 * Browser cross-origin access for the configured origins (spec, "Health and description"): exact origin matching,
 * methods GET POST PUT PATCH DELETE OPTIONS, request headers authorization, content-type, idempotency-key,
 * x-request-id, exposed header x-request-id, preflight cached 600 s, no credentials. Other origins get nothing.
 */

const AllowMethods = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
const AllowHeaders = "authorization, content-type, idempotency-key, x-request-id"

export interface Cors {
  /** Headers to add to an ordinary response, or undefined when the origin is not allowed. */
  readonly responseHeaders: (origin: string | undefined) => Record<string, string> | undefined
  /** Headers of a preflight answer, or undefined when the request is not an allowed preflight. */
  readonly preflightHeaders: (
    method: string,
    origin: string | undefined,
    requestMethod: string | undefined
  ) => Record<string, string> | undefined
}

/** Builds the policy; an empty list allows no origin. */
export const makeCors = (origins: ReadonlyArray<string>): Cors => {
  const allowed = new Set(origins)
  const isAllowed = (origin: string | undefined): origin is string => origin !== undefined && allowed.has(origin)
  return {
    responseHeaders: (origin) =>
      isAllowed(origin)
        ? { "access-control-allow-origin": origin, "access-control-expose-headers": "x-request-id", vary: "Origin" }
        : undefined,
    preflightHeaders: (method, origin, requestMethod) =>
      method === "OPTIONS" && requestMethod !== undefined && isAllowed(origin)
        ? {
          "access-control-allow-origin": origin,
          "access-control-allow-methods": AllowMethods,
          "access-control-allow-headers": AllowHeaders,
          "access-control-max-age": "600",
          vary: "Origin"
        }
        : undefined
  }
}
