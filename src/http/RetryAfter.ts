/**
 * `Retry-After` on a refusal that says when to come back: `429 key_rate_limited` carries the whole seconds until the
 * key's bucket holds a run again (decisions.md, Extensions). The refusal's envelope is encoded by the API as usual;
 * the header is added to that response by a pre-response handler registered before the handler fails (on the
 * request the fiber serves: outside a request it does nothing).
 */
import { HttpEffect, HttpServerResponse } from "effect/http"
import { Effect, Predicate } from "effect"

/** A handler whose `key_rate_limited` refusal answers with `Retry-After`. */
export const withRetryAfter = <A, E, R>(handler: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.tapError(handler, (error) => {
    const seconds = retryAfterOf(error)
    return seconds === undefined
      ? Effect.void
      : Effect.withFiber((fiber) => {
        HttpEffect.appendPreResponseHandlerUnsafe(fiber.context, (_request, response) =>
          Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(seconds))))
        return Effect.void
      })
  })

const retryAfterOf = (error: unknown): number | undefined => {
  if (!Predicate.isTagged(error, "key_rate_limited")) return undefined
  const seconds = (error as { readonly retry_after_seconds?: number }).retry_after_seconds
  return typeof seconds === "number" && Number.isInteger(seconds) && seconds > 0 ? seconds : undefined
}
