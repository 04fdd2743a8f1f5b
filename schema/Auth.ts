/**
 * Authentication of every `/v1` route (spec, "Authentication"): `Authorization: Bearer <credential>`, an API key or
 * a console session token. The middleware provides the `Actor`; the route's scope is checked after the body is
 * decoded (check order: credential, body, scope).
 */
import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context, Schema } from "effect"
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
export class Actor extends Context.Tag("Actor")<Actor, ActorShape>() {}

/** Bearer authentication; 401s carry no `WWW-Authenticate`. */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  security: { bearer: HttpApiSecurity.bearer },
  provides: Actor,
  failure: Schema.Union(
    wire(MissingCredentials),
    wire(InvalidCredential),
    wire(NoActiveOrganization),
    wire(AuthNotConfigured),
    wire(TrustKeysUnavailable),
    wire(DatabaseUnavailable)
  )
}) {}
