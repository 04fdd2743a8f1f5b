/**
 * The edge every request passes: it fixes the request id (header on every response, `request_id` in every JSON
 * error), answers CORS (a preflight only on a path that exists), refuses odd paths and `HEAD` (404 on an unknown
 * path, 405 on a known one), holds the 1 MiB body limit on the routes nothing else reads a body for, and maps
 * whatever escaped the router into the contract: 404/405 with empty bodies, decoding failures in the route's
 * rejection style, the contract's errors as they are, anything else as `500 internal_error`, logged with its cause.
 * What it answers itself is encoded as an endpoint encodes its errors: the JSON envelope of the code (`wire`) or the
 * plain-text rejection (`wireText`), with its status and content type.
 */
import { ByteSize, Cause, Context, Effect, Schema, type SchemaAST, Scope } from "effect"
import { HttpEffect, HttpIncomingMessage, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiError } from "effect/http-api"
import { MiB } from "../../schema/Annotations.js"
import {
  CurrentRequestId,
  ErrorClasses,
  InternalError,
  JsonDataRejection,
  JsonSyntaxRejection,
  PayloadTooLargeRejection,
  QueryStringRejection,
  UnsupportedMediaTypeRejection,
  wire,
  wireText
} from "../../schema/Errors.js"
import type { Cors } from "./Cors.js"
import { badBody, CurrentStyle, describeParseError, notJson } from "./Rejection.js"
import { requestIdFor } from "./RequestId.js"
import { pathOf } from "./RouteLabels.js"
import { hasBody, nodeRequestOf, readBody } from "./RequestShape.js"
import type { RouteTable } from "./RouteTable.js"
import { annotateSpan } from "../telemetry/Spans.js"

/** The status an error class is annotated with (`httpApiStatus`), 500 when none is. */
const statusOf = (ast: SchemaAST.AST): number => {
  const status = ast.annotations?.httpApiStatus ?? ast.context?.annotations?.httpApiStatus
  return typeof status === "number" ? status : 500
}

interface Encoding {
  readonly encode: (error: unknown) => Effect.Effect<unknown, Schema.SchemaError>
  readonly status: number
  readonly respond: (body: unknown, status: number) => HttpServerResponse.HttpServerResponse
}

const json = (body: unknown, status: number) =>
  HttpServerResponse.text(JSON.stringify(body), { status, contentType: "application/json" })
const text = (body: unknown, status: number) =>
  HttpServerResponse.text(String(body), { status, contentType: "text/plain; charset=utf-8" })

const TextRejections = [
  JsonSyntaxRejection,
  QueryStringRejection,
  PayloadTooLargeRejection,
  UnsupportedMediaTypeRejection,
  JsonDataRejection
] as const

/** Every error the edge answers, by its tag (the wire code, or the rejection's name). */
const encodings: ReadonlyMap<string, Encoding> = new Map<string, Encoding>([
  ...ErrorClasses.map((cls): [string, Encoding] => [
    cls._tag,
    { encode: Schema.encodeUnknownEffect(wire(cls)), status: statusOf(cls.ast), respond: json }
  ]),
  ...TextRejections.map((cls): [string, Encoding] => [
    cls._tag,
    { encode: Schema.encodeUnknownEffect(wireText(cls as any)), status: statusOf(cls.ast), respond: text }
  ])
])

const tagOf = (u: unknown): string | undefined =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" ? u._tag : undefined

/** The response of one of the contract's errors; undefined for any other value. */
const contractErrorResponse = (
  error: unknown
): Effect.Effect<HttpServerResponse.HttpServerResponse, Schema.SchemaError> | undefined => {
  const tag = tagOf(error)
  const encoding = tag === undefined ? undefined : encodings.get(tag)
  if (encoding === undefined) return undefined
  return Effect.map(encoding.encode(error), (body) => encoding.respond(body, encoding.status))
}

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

const MaxBodySize = ByteSize.bytes(MiB)

/** One of the contract's errors as its response (an error that cannot be encoded is unexpected). */
const respond = (error: unknown): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  Effect.catch(contractErrorResponse(error)!, () => unexpected(Cause.die(error)))

const unexpected = (cause: Cause.Cause<unknown>): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  Effect.andThen(
    Effect.logError("unexpected failure", cause),
    Effect.orDie(contractErrorResponse(new InternalError({ message: "internal error" }))!)
  )

/** A decoding failure of HttpApi's, in the route's rejection style (JSON where no route set one). */
const decodingFailure = (request: HttpServerRequest.HttpServerRequest, error: HttpApiError.HttpApiSchemaError) =>
  respond(badBody(CurrentStyle.get(nodeRequestOf(request)) ?? "json", describeParseError(error.cause)))

/** A body the platform could not parse as JSON, in the route's rejection style. */
const unparsedBody = (request: HttpServerRequest.HttpServerRequest, error: unknown) => {
  if (!HttpServerError.isHttpServerError(error) || error.reason._tag !== "RequestParseError") return undefined
  const cause = error.reason.cause
  return cause instanceof SyntaxError
    ? respond(notJson(CurrentStyle.get(nodeRequestOf(request)) ?? "json", cause.message))
    : undefined
}

/** Whatever escaped the router, as the contract's answer (an interruption stays one: the client went away). */
const mapCause = (table: RouteTable, request: HttpServerRequest.HttpServerRequest, path: string) =>
(cause: Cause.Cause<unknown>): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
  const reason = cause.reasons.find((each) => !Cause.isInterruptReason(each))
  const error = reason === undefined ? undefined : Cause.isFailReason(reason) ? reason.error : Cause.isDieReason(reason) ? reason.defect : undefined
  if (HttpServerError.isHttpServerError(error) && error.reason._tag === "RouteNotFound") {
    return Effect.succeed(emptyResponse(table.allowsPath(path) ? 405 : 404))
  }
  if (HttpApiError.HttpApiSchemaError.is(error)) return decodingFailure(request, error)
  // A failure the contract declares (a code, or a plain-text rejection) is answered as it is.
  if (reason !== undefined && Cause.isFailReason(reason) && encodings.has(tagOf(error) ?? "")) return respond(error)
  return unparsedBody(request, error) ?? unexpected(cause)
}

/** Headers every response of the request carries: its id, and CORS for an allowed origin. */
const stampResponses = (fiber: { readonly context: Context.Context<never> }, requestId: string, cors: Record<string, string> | undefined) =>
  HttpEffect.appendPreResponseHandlerUnsafe(fiber.context, (_request, response) =>
    Effect.succeed(
      cors === undefined
        ? HttpServerResponse.setHeader(response, "x-request-id", requestId)
        : HttpServerResponse.setHeaders(response, { ...cors, "x-request-id": requestId })
    ))

/**
 * The edge of an API's app, for a route table and a CORS policy: every response it answers is final (the contract's
 * errors encoded here), so nothing reaches the platform's own error answer but an interruption.
 */
export const errorBoundary = (table: RouteTable, cors: Cors) =>
<E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R | HttpServerRequest.HttpServerRequest | Scope.Scope> =>
  Effect.withFiber((fiber) => {
    const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
    const headers = request.headers
    const requestId = requestIdFor(headers["x-request-id"])
    // The id stays on the request's fiber for the rest of the request, as its log lines and error envelopes read it.
    fiber.setContext(Context.add(fiber.context, CurrentRequestId, requestId))
    const path = pathOf(request.url)
    // Paths are exact: a trailing slash or an empty segment is no route (the router would forgive both), and a path
    // whose percent-encoding does not decode names no resource.
    const odd = (path.length > 1 && (path.endsWith("/") || path.includes("//"))) || malformedEncoding(path)
    const known = !odd && table.allowsPath(path)
    // Routing comes first, so only a path that exists answers a preflight; elsewhere it is the unknown path's 404.
    const preflight = known
      ? cors.preflightHeaders(request.method, headers.origin, headers["access-control-request-method"])
      : undefined
    const answer = Effect.suspend(() => {
      if (preflight !== undefined) {
        return Effect.succeed(HttpServerResponse.empty({
          status: 204,
          headers: { ...preflight, "x-request-id": requestId, "content-length": "0" }
        }))
      }
      stampResponses(fiber, requestId, cors.responseHeaders(headers.origin))
      if (odd) return Effect.succeed(emptyResponse(404))
      // HEAD is not served (docs/decisions.md, Boundary): the router would answer it as GET.
      if (request.method === "HEAD") return Effect.succeed(emptyResponse(known ? 405 : 404))
      // A path without a request shape (health, the documents, the pages) has its body read here under the 1 MiB
      // limit; the page behind it reads that text again (the payment processor's webhook).
      const unshaped = known && hasBody(headers) && table.unshapedPath(path)
      const served = unshaped
        ? Effect.flatMap(readBody(request, { bodyLimit: MiB, tooLargeStyle: "plain" }), (seen) =>
          Effect.provideService(app, HttpServerRequest.HttpServerRequest, seen))
        : app
      return Effect.provideService(served, HttpIncomingMessage.MaxBodySize, MaxBodySize)
    })
    return Effect.andThen(
      annotateSpan({ "http.request_id": requestId }),
      Effect.catchCause(answer, mapCause(table, request, path))
    )
  })
