/**
 * The errors every route of a group answers besides its own: `500 internal_error` anywhere, and on a `/v1` route
 * `403 scope_denied`, its request-shape middleware's rejections and the credential's refusals. An endpoint lists
 * them first, in this order, so the document lists each status's codes from the most general to the route's own.
 */
import { AuthenticationErrors } from "./Auth.js"
import { JsonRequestShapeErrors, PlainRequestShapeErrors } from "./Boundary.js"
import { InternalError, ScopeDenied, wire } from "./Errors.js"

/** The errors of a route outside `/v1` (health). */
export const CommonErrors = [wire(InternalError)] as const

/** The errors of a `/v1` route of the runs and router groups (JSON rejections). */
export const JsonRouteErrors = [
  ...CommonErrors,
  wire(ScopeDenied),
  ...JsonRequestShapeErrors,
  ...AuthenticationErrors
] as const

/** The errors of a `/v1` route of the keys, usage and billing groups (plain-text rejections). */
export const PlainRouteErrors = [
  ...CommonErrors,
  wire(ScopeDenied),
  ...PlainRequestShapeErrors,
  ...AuthenticationErrors
] as const
