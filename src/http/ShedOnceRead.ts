/**
 * The overload guard's decision on a request to a shedable route, deferred until its body has been read: the guard
 * (src/server/Overload.ts) registers it as the request arrives (`deferUntilRead`), and the body's reader takes it once
 * the body is in (`takeOnceRead`), so a slow upload holds no place meanwhile (decisions.md, "Slow clients").
 */
import type { IncomingMessage } from "node:http"

/** The message of a shed request. */
export const ShedMessage =
  "the service is at capacity and could not take the run now; nothing was stored or charged: retry after the " +
  "Retry-After seconds with a new idempotency key"

/** Seconds a shed client is told to wait. */
export const ShedRetryAfterSeconds = 1

/**
 * On a request to a shedable route whose body is still arriving: what the guard does once it has. A property of the
 * request's own (a symbol no caller can name) lives and dies with the request, without a weak map's cost per request.
 */
const awaitingBody = Symbol("arbiter.awaitingBody")

interface Awaiting {
  [awaitingBody]?: ((answerHere: boolean) => boolean) | undefined
}

/** The guard's decision on `request`, taken once its body has been read (true: taken; false: shed). */
export const deferUntilRead = (request: IncomingMessage, take: (answerHere: boolean) => boolean): void => {
  const awaiting: IncomingMessage & Awaiting = request
  awaiting[awaitingBody] = take
}

/**
 * Called by the reader of a shedable route's body once it has been read: true when the guard takes the request (it
 * is counted until its response closes), false when it is shed. With `answerHere` the guard answers a shed request
 * itself (`503 no_route_available`, as at once); otherwise the caller answers it through the API
 * (`NoRouteAvailable` with `Retry-After: ShedRetryAfterSeconds`). A request no guard waits on is taken.
 */
export const takeOnceRead = (request: IncomingMessage, answerHere: boolean): boolean => {
  const awaiting: IncomingMessage & Awaiting = request
  const take = awaiting[awaitingBody]
  if (take === undefined) return true
  awaiting[awaitingBody] = undefined
  return take(answerHere)
}
