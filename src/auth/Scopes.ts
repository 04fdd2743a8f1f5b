/**
 * The scope check, in one place. Every `/v1` endpoint declares the scope it needs next to the route (`RequiredScope`);
 * the route table reads it at start-up and refuses an authenticated endpoint without one (src/http/RouteTable.ts),
 * and the group's request-shape middleware, an `HttpApiMiddleware` that knows its endpoint, runs this check once the
 * credential is known and the body read (src/http/RequestShape.ts). The contract checks the body before the scope
 * (spec, check order: credential, body, scope), so a credential lacking the scope is answered `403 scope_denied`,
 * naming it, only when the request decodes; otherwise with that decoding failure, as HttpApi answers it. A request
 * never reaches its handler without the scope.
 */
import { Effect } from "effect"
import { Actor } from "../../schema/Auth.js"
import { ScopeDenied } from "../../schema/Errors.js"
import type { Scope } from "../../schema/Scope.js"

/**
 * Passes when the actor holds `scope`; otherwise fails with the request's decoding failure (`decodes`, run only
 * then) or, when it decodes, with `scope_denied`.
 */
export const checkScope = <E>(scope: Scope, decodes: Effect.Effect<void, E>): Effect.Effect<void, ScopeDenied | E, Actor> =>
  Effect.flatMap(Actor, (actor) =>
    actor.scopes.has(scope)
      ? Effect.void
      : Effect.andThen(decodes, Effect.fail(new ScopeDenied({ message: `the credential lacks the ${scope} scope` }))))
