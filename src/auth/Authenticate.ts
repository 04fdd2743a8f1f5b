/**
 * The Authentication middleware of every `/v1` group. The `Authorization` header is parsed here, by hand, and the
 * credential HttpApi decodes for the middleware is not read: the scheme is case-insensitive, the token is trimmed, and
 * no header, another scheme or an empty token is `401 missing_credentials`. 401s carry no `WWW-Authenticate`.
 */
import { Effect, Layer } from "effect"
import { HttpServerRequest } from "effect/http"
import { Actor, type ActorShape, Authentication } from "../../schema/Auth.js"
import { MissingCredentials } from "../../schema/Errors.js"
import { CredentialVerifier, type VerifyError } from "./CredentialVerifier.js"
import { annotateSpan } from "../telemetry/Spans.js"

/** The token of an `Authorization: Bearer <token>` header, or undefined when there is none. */
export const bearerToken = (header: string | undefined): string | undefined => {
  if (header === undefined) return undefined
  const trimmed = header.trim()
  const space = trimmed.search(/[ \t]/)
  if (space === -1) return undefined
  if (trimmed.slice(0, space).toLowerCase() !== "bearer") return undefined
  const token = trimmed.slice(space + 1).trim()
  return token === "" ? undefined : token
}

const missing = () => new MissingCredentials({ message: "send Authorization: Bearer <API key or session token>" })

/** The caller of a request with this `Authorization` header, through the credential verifier. */
export const authenticate = (
  verifier: CredentialVerifier["Service"],
  header: string | undefined
): Effect.Effect<ActorShape, MissingCredentials | VerifyError> =>
  Effect.suspend((): Effect.Effect<ActorShape, MissingCredentials | VerifyError> => {
    const token = bearerToken(header)
    if (token === undefined) return Effect.fail(missing())
    return Effect.tap(verifier.verify(token), (actor) => annotateSpan({ "arbiter.organization_id": actor.organizationId }))
  })

/** Authentication through the credential verifier: the handler runs with the caller as its `Actor`. */
export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.map(CredentialVerifier, (verifier) =>
    Authentication.of({
      bearer: (handler) =>
        HttpServerRequest.HttpServerRequest.use((request) =>
          Effect.flatMap(
            authenticate(verifier, request.headers["authorization"]),
            (actor) => Effect.provideService(handler, Actor, actor)
          )
        )
    }))
)
