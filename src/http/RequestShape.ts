/**
 * The one place a request's size, content type, body and query string are checked before HttpApi decodes the
 * payload, in the contract's check order: routing, credential, these, decoding, then the scope (on a route that takes
 * a payload, the scope comes before its body is read, after what the headers alone say against it). A body is read
 * under the route's limit, parsed as JSON no deeper than `MaxJsonDepth` (JsonBody.ts), and handed to HttpApi already
 * parsed (the view below). It also records the route's rejection style for the edge, which maps whatever decoding
 * fails after.
 */
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { Context, Effect, Exit, Layer } from "effect"
import { Headers, HttpEffect, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import type { HttpApiEndpoint } from "effect/http-api"
import type { RejectionStyle } from "../../schema/Annotations.js"
import { JsonRequestShape, PlainRequestShape } from "../../schema/Boundary.js"
import { isJsonContentType, parseJsonBody } from "./JsonBody.js"
import { badBody, badQuery, type BodyRejection, CurrentStyle, notJson, tooLarge, wrongContentType } from "./Rejection.js"
import { checkScope } from "../auth/Scopes.js"
import { unstorableIn, unstorableInJson } from "../db/StorableText.js"
import type { EndpointInfo, RouteTable } from "./RouteTable.js"
import { NoRouteAvailable } from "../../schema/Errors.js"
import { ShedMessage, ShedRetryAfterSeconds, takeOnceRead } from "./ShedOnceRead.js"
import { newTimingMarks, serverTimingValue } from "./ServerTiming.js"
import type { IncomingHttpHeaders, IncomingMessage } from "node:http"

type AnyHeaders = IncomingHttpHeaders | HttpServerRequest.HttpServerRequest["headers"]

/** The request carries a body (a length over zero, or chunked). */
export const hasBody = (headers: AnyHeaders): boolean =>
  headers["transfer-encoding"] !== undefined ||
  (headers["content-length"] !== undefined && headers["content-length"] !== "0")

/** The headers declare a body longer than `limit` (refused before reading it). */
const declaresMoreThan = (headers: AnyHeaders, limit: number): boolean => {
  const length = headers["content-length"]
  return length !== undefined && Number(length) > limit
}

/** The Node request under a request of the server. */
export const nodeRequestOf = (request: HttpServerRequest.HttpServerRequest): IncomingMessage =>
  NodeHttpServerRequest.toIncomingMessage(request) as IncomingMessage

/** The connection closed before the request's body had arrived: the client went away, or its body was late. */
const clientGone = (raw: IncomingMessage): boolean => !raw.complete && (raw.destroyed || raw.socket.destroyed)

export const UploadAbortedMessage = "the client closed the connection before its request body arrived"

/**
 * A client that aborts its upload is a normal event (decisions.md, Precise rules): logged at debug level (without a
 * stack), and the request's fiber ends interrupted, as the platform ends one whose client left, so no failure is
 * logged or answered.
 */
const uploadAborted: Effect.Effect<never> = Effect.andThen(Effect.logDebug(UploadAbortedMessage), Effect.interrupt)

/**
 * Reads a body as text under a limit straight from the Node request (the platform's `request.text` costs many steps
 * of the runtime per request for the same few kilobytes). Over the limit the rest is drained, not read, so the
 * connection stays up for the 413. Calls `done` once, unless the function it answers is called first (it stops
 * reading). When the connection closes before the body has arrived (the client left, or BodyDeadline.ts answered a
 * late body), `aborted` is called instead. The connection's own `close` is watched beside the request's: once its
 * response has been sent (the 408 of a late body), Node detaches an unfinished request from its connection, which
 * then closes without the request ever emitting `close`, `aborted` or `error`.
 */
const readPayloadText = (
  raw: IncomingMessage,
  info: Pick<EndpointInfo, "bodyLimit" | "tooLargeStyle">,
  done: (exit: Exit.Exit<string, BodyRejection>) => void,
  aborted: () => void
): () => void => {
  if (raw.destroyed || clientGone(raw)) {
    aborted()
    return () => {}
  }
  const chunks: Array<Buffer> = []
  let size = 0
  const socket = raw.socket
  const stop = () => {
    raw.off("data", onData)
    raw.off("end", onEnd)
    raw.off("error", onError)
    raw.off("close", onClose)
    socket.off("close", onConnectionClose)
  }
  const onData = (chunk: Buffer) => {
    size += chunk.length
    if (size <= info.bodyLimit) {
      chunks.push(chunk)
      return
    }
    stop()
    raw.resume()
    done(Exit.fail(tooLarge(info.tooLargeStyle, info.bodyLimit)))
  }
  const onEnd = () => {
    stop()
    done(Exit.succeed(Buffer.concat(chunks, size).toString("utf8")))
  }
  const onError = (error: Error) => {
    stop()
    if (clientGone(raw)) aborted()
    else done(Exit.die(error))
  }
  const onClose = () => {
    stop()
    aborted()
  }
  // A body that arrived whole is still read from the request once its connection has closed.
  const onConnectionClose = () => {
    if (!raw.complete) onClose()
  }
  raw.on("data", onData)
  raw.once("end", onEnd)
  raw.once("error", onError)
  raw.once("close", onClose)
  socket.once("close", onConnectionClose)
  return stop
}

/**
 * Reads the body of a request no payload reader reads (a route without a payload, a path without a request shape)
 * under a limit, a declared length over it refused before reading. Returns the request as its handler is to see it:
 * its `text` the body read (a page such as the payment processor's webhook reads it again).
 */
export const readBody = (
  request: HttpServerRequest.HttpServerRequest,
  info: Pick<EndpointInfo, "bodyLimit" | "tooLargeStyle">
): Effect.Effect<HttpServerRequest.HttpServerRequest, BodyRejection> =>
  declaresMoreThan(request.headers, info.bodyLimit)
    ? Effect.fail(tooLarge(info.tooLargeStyle, info.bodyLimit))
    : Effect.map(
      Effect.callback<string, BodyRejection>((resume) => {
        const stop = readPayloadText(nodeRequestOf(request), info, resume, () => resume(uploadAborted))
        return Effect.sync(stop)
      }),
      (text) => Object.create(request, { text: { value: Effect.succeed(text) } }) as HttpServerRequest.HttpServerRequest
    )

/** A JSON payload read: its text and its parsed value. */
export interface JsonPayload {
  readonly text: string
  readonly value: unknown
}

/** The checks of a payload's text once read: JSON, no deeper than `MaxJsonDepth`, only text PostgreSQL can store. */
const checkPayloadText = (text: string, style: RejectionStyle): Exit.Exit<JsonPayload, BodyRejection> => {
  const body = parseJsonBody(text)
  if (body._tag === "Malformed") return Exit.fail(notJson(style, body.detail))
  if (body._tag === "TooDeep") return Exit.fail(badBody(style, body.detail))
  const unstorable = unstorableInJson(text, body.value)
  if (unstorable !== undefined) return Exit.fail(badBody(style, `${unstorable}, which cannot be stored`))
  return Exit.succeed({ text, value: body.value })
}

/** What the headers alone say against a JSON payload: a declared length over the limit, else a content type not JSON. */
export const payloadHeadersRefusal = (
  raw: IncomingMessage,
  info: Pick<EndpointInfo, "bodyLimit" | "tooLargeStyle" | "style">
): BodyRejection | undefined => {
  if (declaresMoreThan(raw.headers, info.bodyLimit)) return tooLarge(info.tooLargeStyle, info.bodyLimit)
  return isJsonContentType(raw.headers["content-type"]) ? undefined : wrongContentType(info.style)
}

/** The JSON payload of a request on a route that takes one, in the route's rejection style: the checks above. */
export const readJsonPayload = (
  raw: IncomingMessage,
  info: Pick<EndpointInfo, "bodyLimit" | "tooLargeStyle" | "style">
): Effect.Effect<JsonPayload, BodyRejection> =>
  Effect.suspend(() => {
    const refused = payloadHeadersRefusal(raw, info)
    if (refused !== undefined) return Effect.fail(refused)
    return Effect.callback<JsonPayload, BodyRejection>((resume) => {
      const read = (text: Exit.Exit<string, BodyRejection>) =>
        resume(Exit.isSuccess(text) ? checkPayloadText(text.value, info.style) : Exit.failCause(text.cause))
      const stop = readPayloadText(raw, info, read, () => resume(uploadAborted))
      return Effect.sync(stop)
    })
  })

/**
 * The request as HttpApi's payload reader must see it once the body has been read and parsed here: its `json` the
 * value parsed, its `text` the body, and its content type `application/json` whatever JSON type the caller named
 * (HttpApi knows no other, and would read the consumed body again as bytes and wait forever). Everything else is the
 * original request's, by prototype.
 */
const parsedJsonView = (
  request: HttpServerRequest.HttpServerRequest,
  text: string,
  value: unknown
): HttpServerRequest.HttpServerRequest =>
  Object.create(request, {
    headers: { value: Headers.set(request.headers, "content-type", "application/json"), enumerable: true },
    text: { value: Effect.succeed(text) },
    json: { value: Effect.succeed(value) }
  })

/** The first query parameter whose name or value cannot be stored, in words. */
const unstorableQuery = (query: Readonly<Record<string, string | ReadonlyArray<string>>>): string | undefined => {
  const found = unstorableIn(query)
  return found === undefined ? undefined : `${found.replace(/^a field name/, "a parameter name")}, which cannot be stored`
}

/** The scope, checked from the headers before a payload is read, so a credential lacking it waits for no upload. */
const scopeBeforeBody = (raw: IncomingMessage, info: EndpointInfo) => {
  const refused = payloadHeadersRefusal(raw, info)
  if (refused !== undefined) return Effect.fail(refused)
  return info.scope === undefined ? Effect.void : checkScope(info.scope, Effect.void)
}

/** The overload guard's decision once the body is read (ShedOnceRead.ts): shed, a `503` answered through the API. */
const takenOnceRead = (raw: IncomingMessage) =>
  takeOnceRead(raw, false)
    ? Effect.void
    : Effect.suspend(() => {
      const marks = newTimingMarks()
      return Effect.andThen(
        HttpEffect.appendPreResponseHandler((_request, response) =>
          Effect.sync(() =>
            HttpServerResponse.setHeaders(response, {
              "retry-after": String(ShedRetryAfterSeconds),
              "server-timing": serverTimingValue(marks)
            })
          )
        ),
        Effect.fail(new NoRouteAvailable({ message: ShedMessage }))
      )
    })

/** The request the handler sees once its shape is checked: the original, or the view with the body parsed. */
const checkShape = (request: HttpServerRequest.HttpServerRequest, info: EndpointInfo, context: Context.Context<never>) =>
  Effect.gen(function*() {
    const style: RejectionStyle = info.style
    CurrentStyle.set(nodeRequestOf(request), style)
    let seen = request
    if (info.hasPayload) {
      const raw = nodeRequestOf(request)
      yield* scopeBeforeBody(raw, info)
      const body = yield* readJsonPayload(raw, info)
      yield* takenOnceRead(raw)
      seen = parsedJsonView(request, body.text, body.value)
    } else if (hasBody(request.headers)) {
      seen = yield* readBody(request, info)
    }
    const query = Context.getUnsafe(context, HttpServerRequest.ParsedSearchParams)
    const problem = info.checkQuery(query) ?? unstorableQuery(query)
    if (problem !== undefined) return yield* badQuery(style, problem)
    if (info.scope !== undefined && !info.hasPayload) {
      yield* checkScope(info.scope, info.decodeRequest(seen, Context.getUnsafe(context, HttpRouter.RouteContext).params))
    }
    return seen
  })

/** The request-shape middleware of one route table: the checks above, then the endpoint's handler. */
const shapeMiddleware = (table: RouteTable) =>
<E, R>(
  httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  options: { readonly endpoint: HttpApiEndpoint.Top }
) =>
  Effect.withFiber((fiber) => {
    const info = table.endpoints.get(`${options.endpoint.method} ${options.endpoint.path}`)
    if (info === undefined) return httpEffect
    const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
    return Effect.flatMap(checkShape(request, info, fiber.context), (seen) =>
      seen === request ? httpEffect : Effect.provideService(httpEffect, HttpServerRequest.HttpServerRequest, seen))
  })

/** Both request-shape middlewares for the endpoints of one route table (the style is read from the table). */
export const RequestShapeLive = (table: RouteTable) => {
  // Typed as the middlewares declare themselves: the scope check's `Actor` comes from the authentication middleware
  // around them, and its `scope_denied` and a decoding failure are answered by the endpoint and the edge.
  const check = shapeMiddleware(table) as any
  return Layer.merge(Layer.succeed(PlainRequestShape, check), Layer.succeed(JsonRequestShape, check))
}
