/**
 * The edge every request passes: it fixes the request id (header on every response, `request_id` in every JSON
 * error), answers CORS (a preflight only on a path that exists), refuses odd paths and `HEAD` (404 on an unknown
 * path, 405 on a known one), holds the 1 MiB body limit on the routes nothing else reads a body for, and maps whatever escaped the router
 * into the contract: 404/405 with empty bodies, decoding failures in the route's rejection style, the contract's
 * errors as they are, and anything unexpected as `500 internal_error`, logged with its cause. Database failures
 * arrive here already mapped (`database_unavailable`, at each repository's edge: db/Unavailable.ts).
 */
import { HttpApiError, HttpApp, HttpIncomingMessage, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, FiberRef, Option } from "effect"
import { MiB } from "../../schema/Annotations.js"
import {
  CurrentRequestId,
  ErrorClasses,
  InternalError,
  JsonDataRejection,
  JsonSyntaxRejection,
  PayloadTooLargeRejection,
  QueryStringRejection,
  UnsupportedMediaTypeRejection
} from "../../schema/Errors.js"
import type { Cors } from "./Cors.js"
import { badBody, CurrentStyle, describeIssue, notJson } from "./Rejection.js"
import { requestIdFor } from "./RequestId.js"
import { hasBody, readBody } from "./RequestShape.js"
import type { RouteTable } from "./RouteTable.js"
import { annotateSpan } from "../telemetry/Spans.js"

const knownTags = new Set<string>([
  ...ErrorClasses.map((cls) => cls._tag),
  JsonDataRejection._tag,
  JsonSyntaxRejection._tag,
  PayloadTooLargeRejection._tag,
  QueryStringRejection._tag,
  UnsupportedMediaTypeRejection._tag
])

const tagOf = (u: unknown): string | undefined =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" ? u._tag : undefined

/**
 * A path whose percent-encoding does not decode (a `%` without two hex digits, or bytes that are not UTF-8): no
 * resource has such a name, so it is `404` whatever the method (decisions.md, Precise rules), never the `405` of a
 * known path its undecoded text would match.
 */
const malformedEncoding = (path: string): boolean => {
  if (!path.includes("%")) return false
  try {
    decodeURIComponent(path)
    return false
  } catch {
    return true
  }
}

const emptyResponse = (status: number) => HttpServerResponse.empty({ status, headers: { "content-length": "0" } })

const unexpected = (cause: Cause.Cause<unknown>) =>
  Effect.zipRight(
    Effect.logError("unexpected failure", cause),
    Effect.fail(new InternalError({ message: "internal error" }))
  )

const mapCause = (table: RouteTable, path: string) => (cause: Cause.Cause<unknown>) =>
  Effect.gen(function*() {
    const failure = Cause.failureOption(cause)
    if (Option.isSome(failure)) {
      const error = failure.value
      if (error instanceof HttpServerError.RouteNotFound) return emptyResponse(table.allowsPath(path) ? 405 : 404)
      if (error instanceof HttpApiError.HttpApiDecodeError) {
        const style = (yield* FiberRef.get(CurrentStyle)) ?? "json"
        const first = error.issues[0]
        return yield* badBody(style, first === undefined ? error.message : describeIssue(first))
      }
      const tag = tagOf(error)
      if (tag !== undefined && knownTags.has(tag)) return yield* Effect.failCause(cause)
      return yield* unexpected(cause)
    }
    const defect = Cause.dieOption(cause)
    if (Option.isSome(defect)) {
      const error = defect.value
      if (error instanceof HttpServerError.RequestError && error.cause instanceof SyntaxError) {
        const style = (yield* FiberRef.get(CurrentStyle)) ?? "json"
        return yield* notJson(style, error.cause.message)
      }
      return yield* unexpected(cause)
    }
    return yield* Effect.failCause(cause)
  })

/** The edge middleware of an API, for a route table and a CORS policy. */
export const errorBoundary = (table: RouteTable, cors: Cors) => (app: HttpApp.Default): HttpApp.Default<unknown> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const headers = request.headers
    const requestId = requestIdFor(headers["x-request-id"])
    yield* FiberRef.set(CurrentRequestId, requestId)
    yield* annotateSpan({ "http.request_id": requestId })
    const query = request.url.indexOf("?")
    const path = query === -1 ? request.url : request.url.slice(0, query)
    // Paths are exact: a trailing slash or an empty segment is no route (the router would forgive both), and a path
    // whose percent-encoding does not decode names no resource.
    const odd = (path.length > 1 && (path.endsWith("/") || path.includes("//"))) || malformedEncoding(path)
    const known = !odd && table.allowsPath(path)
    // Routing comes first, so only a path that exists answers a preflight; elsewhere it is the unknown path's 404.
    const preflight = known
      ? cors.preflightHeaders(request.method, headers.origin, headers["access-control-request-method"])
      : undefined
    if (preflight !== undefined) {
      return HttpServerResponse.empty({
        status: 204,
        headers: { ...preflight, "x-request-id": requestId, "content-length": "0" }
      })
    }
    const corsHeaders = cors.responseHeaders(headers.origin)
    yield* HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(
        corsHeaders === undefined
          ? HttpServerResponse.setHeader(response, "x-request-id", requestId)
          : HttpServerResponse.setHeaders(response, { ...corsHeaders, "x-request-id": requestId })
      )
    )
    if (odd) return emptyResponse(404)
    // HEAD is not served (docs/decisions.md, Boundary): the router would answer it as GET.
    if (request.method === "HEAD") return emptyResponse(known ? 405 : 404)
    // Nothing reads a body sent to health, the OpenAPI document or the docs; the 1 MiB limit still holds there.
    const unshaped = known && hasBody(headers) && table.unshapedPath(path)
    return yield* (unshaped ? Effect.zipRight(readBody(request, { bodyLimit: MiB, tooLargeStyle: "plain" }), app) : app).pipe(
      HttpIncomingMessage.withMaxBodySize(Option.some(MiB)),
      Effect.catchAllCause(mapCause(table, path))
    )
  })
