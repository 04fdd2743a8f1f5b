/**
 * Authentication of every `/v1` route (spec, "Authentication"): `Authorization: Bearer <credential>`, an API key or
 * a console session token. The middleware provides the `Actor`; the route's scope is checked after the body is
 * decoded (check order: credential, body, scope).
 */
import { Context } from "effect"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import {
  AuthNotConfigured,
  DatabaseUnavailable,
  InvalidCredential,
  MissingCredentials,
  NoActiveOrganization,
  TrustKeysUnavailable,
  wire
} from "./Errors.js"
import type { Scope } from "./Scope.js"

/** Who a key or a session acts as. */
export interface Principal {
  readonly type: "user" | "service_account"
  readonly id: string
}

/** The authenticated caller of a request. */
export interface ActorShape {
  readonly organizationId: string
  readonly principal: Principal
  readonly scopes: ReadonlySet<Scope>
  readonly credential: { readonly kind: "api_key"; readonly keyId: string } | { readonly kind: "session" }
}

/** The caller, provided by the Authentication middleware to every `/v1` handler. */
export class Actor extends Context.Service<Actor, ActorShape>()("Actor") {}

/** The answers of {@link Authentication}. */
export const AuthenticationErrors = [
  wire(MissingCredentials),
  wire(InvalidCredential),
  wire(NoActiveOrganization),
  wire(AuthNotConfigured),
  wire(TrustKeysUnavailable),
  wire(DatabaseUnavailable)
] as const

/**
 * The bearer scheme, named as the document has always named it (`bearer`); a request's scheme matches it in any case
 * (RFC 9110, as `HttpApiSecurity.bearer` does).
 */
const Bearer = HttpApiSecurity.http({ scheme: "bearer" })

/** Bearer authentication; 401s carry no `WWW-Authenticate`. */
export class Authentication extends HttpApiMiddleware.Service<Authentication, { provides: Actor }>()("Authentication", {
  security: { bearer: Bearer },
  error: AuthenticationErrors
}) {}
