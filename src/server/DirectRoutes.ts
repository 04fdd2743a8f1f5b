/**
 * Routes served straight on Node's request and response, beside HttpApi's router, for the one request that has to be
 * cheap: `POST /v1/runs` (src/server/CreateRunRoute.ts). The router, HttpApi's middlewares and the platform's request
 * handling cost a request many steps of the Effect runtime before its handler does anything (docs/performance.md has
 * the measurements); a direct route runs the API's own checks and the handler's function as one Effect program and
 * writes its success itself. Everything else about the request stays the API's: a direct route takes only its exact
 * method and URL (a query string goes through the router, which refuses it as the contract says), and it hands every
 * failure back to the API (`viaApi`), which answers it through the same boundary, error encoding and observation as any
 * other request, so a refusal reads the same whichever way the request came.
 */
import { Context, type Effect } from "effect"
import type { HttpServerResponse } from "effect/http"
import type { IncomingMessage, ServerResponse } from "node:http"

/** What the server gives a direct route. */
export interface DirectServer {
  /** The server's services: its loggers wrapped with the request log context (RequestLogContext.ts). */
  readonly runtime: Context.Context<never>
  /**
   * Answers the request through the API as if its route had answered with `answer` (a failure, usually): the edge
   * (request id, CORS), the error encoding and the observation of every request. The request's body must already
   * have been read, or be left unread for good (a refusal from the headers: Node discards the rest once the answer is
   * written, and BodyDeadline.ts closes a connection whose body is still late).
   */
  readonly viaApi: (
    request: IncomingMessage,
    response: ServerResponse,
    answer: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>
  ) => void
  /**
   * Counts and times an answer the route wrote itself (RequestObserver.ts); answers its access line, for the route to
   * run in a fiber of the request's, or undefined when none is written (`ACCESS_LOG=false`, or below info level).
   */
  readonly observe: (method: string, route: string, status: number, durationMs: number) => Effect.Effect<void> | undefined
}

/** A route served outside the router: its method, its exact URL, and its handler once the server is known. */
export interface DirectRoute {
  readonly method: string
  readonly url: string
  readonly make: (server: DirectServer) => (request: IncomingMessage, response: ServerResponse) => void
}

/** The direct routes of a server (none unless a layer provides them). */
export class DirectRoutes extends Context.Service<DirectRoutes, ReadonlyArray<DirectRoute>>()("DirectRoutes") {}
