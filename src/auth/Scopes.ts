/**
 * The scope check, in one place: every handler of a `/v1` group is wrapped so that, once its body has been decoded,
 * the actor must hold the scope annotated on the endpoint (`RequiredScope`), else `403 scope_denied` naming it.
 * A `/v1` endpoint without a scope annotation fails at start-up, so a scope cannot be forgotten.
 */
import type { HttpApiBuilder, HttpApiEndpoint } from "@effect/platform"
import { Chunk, Context, Effect } from "effect"
import { Actor } from "../../schema/Auth.js"
import { ScopeDenied } from "../../schema/Errors.js"
import { RequiredScope, type Scope } from "../../schema/Scope.js"

/** Fails with `scope_denied` unless the actor holds the scope. */
export const requireScope = (scope: Scope) =>
  Effect.flatMap(Actor, (actor) =>
    actor.scopes.has(scope)
      ? Effect.void
      : Effect.fail(new ScopeDenied({ message: `the credential lacks the ${scope} scope` })))

/** Wraps every handler of a group with its endpoint's scope check. */
export const enforceScopes = <H extends HttpApiBuilder.Handlers<any, any, any, any>>(handlers: H): H => {
  const wrapped = Object.create(Object.getPrototypeOf(handlers))
  wrapped.group = handlers.group
  wrapped.handlers = Chunk.map(handlers.handlers, (item: HttpApiBuilder.Handlers.Item<any, any>) => {
    const scope = Context.getOption((item.endpoint as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps).annotations, RequiredScope)
    if (scope._tag === "None") {
      throw new Error(`endpoint ${item.endpoint.name} of group ${handlers.group.identifier} declares no scope`)
    }
    const check = requireScope(scope.value)
    return { ...item, handler: (request: any) => Effect.zipRight(check, item.handler(request)) }
  })
  return wrapped
}
