/**
 * What the boundary knows about each endpoint, computed once from the HttpApi definition: its rejection style, body
 * limit, whether it takes a body, its compiled query decoder, its required scope and how HttpApi will decode its
 * request. An authenticated endpoint without a scope, or whose group has no request-shape middleware to check it,
 * stops the start. Also answers "does any route serve this path with another method?", which turns the router's
 * miss into 405 instead of 404.
 */
import { HttpApi, HttpApiError, HttpApiGroup } from "@effect/platform"
import type { HttpApiEndpoint, HttpRouter, HttpServerRequest } from "@effect/platform"
import { Context, Effect, Option, ParseResult, Schema } from "effect"
import { BodyLimit, MiB, type RejectionStyle } from "../../schema/Annotations.js"
import { Authentication } from "../../schema/Auth.js"
import { JsonRequestShape, PlainRequestShape } from "../../schema/Boundary.js"
import { RequiredScope, type Scope } from "../../schema/Scope.js"
import { describeParseError } from "./Rejection.js"

/** The boundary's view of one endpoint. */
export interface EndpointInfo {
  readonly method: string
  readonly path: string
  readonly style: RejectionStyle
  /**
   * How a body over `bodyLimit` is refused: the JSON `413 body_too_large` only on a JSON-style route that takes a
   * body (`POST /v1/runs`, `POST /v1/router/select`); everywhere else the plain-text 413 (spec, Plain-text rejections).
   */
  readonly tooLargeStyle: RejectionStyle
  readonly bodyLimit: number
  readonly hasPayload: boolean
  /** The scope an authenticated endpoint requires; undefined on an endpoint without authentication. */
  readonly scope: Scope | undefined
  /** Checks the query string; the first problem in words, or undefined when it is acceptable. */
  readonly checkQuery: (query: Readonly<Record<string, unknown>>) => string | undefined
  /**
   * Decodes the path, the body (of the request as the handler sees it, the body parsed) and the headers as HttpApi
   * decodes them before the handler, in its order, failing as it fails; the query is `checkQuery`'s.
   */
  readonly decodeRequest: (
    request: HttpServerRequest.HttpServerRequest,
    params: HttpRouter.RouteContext["params"]
  ) => Effect.Effect<void, HttpApiError.HttpApiDecodeError>
  /**
   * The same decoding, of the parts given (the body as an effect, read only when the endpoint has a payload),
   * answering the decoded payload and headers, for a route served outside the router (src/runs/CreateRunRoute.ts).
   */
  readonly decodeInput: (
    params: HttpRouter.RouteContext["params"],
    body: Effect.Effect<unknown>,
    headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  ) => Effect.Effect<DecodedInput, HttpApiError.HttpApiDecodeError>
  /**
   * The body alone (already read), decoded without the runtime, as HttpApi decodes it: for an endpoint whose path has
   * no parameters and whose headers schema refuses no request (`POST /v1/runs`: `RequiredIdempotencyKey`, which the
   * handler never reads), so the payload decides alone. `undefined` when it does not decode (then `decodeInput` says
   * why, in HttpApi's words); schemas with asynchronous parts also answer `undefined`.
   */
  readonly decodePayloadNow: (body: unknown) => { readonly payload: unknown } | undefined
}

/** An endpoint's payload and headers as HttpApi decodes them (undefined where the endpoint declares none). */
export interface DecodedInput {
  readonly payload: unknown
  readonly headers: unknown
}

/** Endpoints with a request shape by `METHOD path` (the router's template), plus path matchers for 405 detection. */
export interface RouteTable {
  readonly endpoints: ReadonlyMap<string, EndpointInfo>
  readonly allowsPath: (path: string) => boolean
  /**
   * A path served without a request shape (health, the OpenAPI document, the docs): nothing reads its body, so the
   * edge enforces the 1 MiB limit on it.
   */
  readonly unshapedPath: (path: string) => boolean
}

const templateToRegExp = (template: string): RegExp =>
  new RegExp(
    "^" + template.split("/").map((segment) =>
      segment.startsWith(":") ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    ).join("/") + "$"
  )

const compileQuery = (schema: Option.Option<Schema.Schema<any, any, never>>) => {
  if (Option.isNone(schema)) {
    return (query: Readonly<Record<string, unknown>>) => {
      const first = Object.keys(query)[0]
      return first === undefined ? undefined : `unknown field "${first}"`
    }
  }
  const decode = ParseResult.decodeUnknownEither(schema.value)
  return (query: Readonly<Record<string, unknown>>) => {
    const result = decode(query, { errors: "first" })
    return result._tag === "Left" ? describeParseError(new ParseResult.ParseError({ issue: result.left })) : undefined
  }
}

const decoder = (schema: Option.Option<Schema.Schema.Any>) =>
  Option.map(schema, (value) => Schema.decodeUnknown(value as Schema.Schema<unknown, unknown, never>))

const compileInputDecoder = (endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps): EndpointInfo["decodeInput"] => {
  const path = decoder(endpoint.pathSchema)
  const payload = decoder(endpoint.payloadSchema)
  const headers = decoder(endpoint.headersSchema)
  return (params, body, given) =>
    Effect.gen(function*() {
      if (Option.isSome(path)) yield* path.value(params)
      const decodedPayload = Option.isSome(payload) ? yield* Effect.flatMap(body, payload.value) : undefined
      const decodedHeaders = Option.isSome(headers) ? yield* headers.value(given) : undefined
      return { payload: decodedPayload, headers: decodedHeaders }
    }).pipe(Effect.catchAll(HttpApiError.HttpApiDecodeError.refailParseError))
}

const decoderNow = (schema: Option.Option<Schema.Schema.Any>) =>
  Option.map(schema, (value) => ParseResult.decodeUnknownEither(value as Schema.Schema<unknown, unknown, never>))

const compilePayloadDecoderNow = (endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps): EndpointInfo["decodePayloadNow"] => {
  const payload = decoderNow(endpoint.payloadSchema)
  return (body) => {
    if (Option.isNone(payload)) return { payload: undefined }
    const decoded = payload.value(body)
    return decoded._tag === "Left" ? undefined : { payload: decoded.right }
  }
}

/** An API's endpoints, and the path matchers of all of them and of those without a request shape. */
interface Reflected {
  readonly endpoints: ReadonlyMap<string, EndpointInfo>
  readonly patterns: ReadonlyArray<RegExp>
  readonly unshaped: ReadonlyArray<RegExp>
}

/** Each API reflected once per process: the boundary and the direct route share its decoders (2.7 ms to build). */
const reflectedApis = new WeakMap<object, Reflected>()

/** Builds the table of an API; `extraPaths` are routes served outside the API (the OpenAPI document, the docs). */
export const makeRouteTable = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>,
  extraPaths: ReadonlyArray<string> = []
): RouteTable => {
  const reflected = reflectedApis.get(api) ?? reflect(api)
  reflectedApis.set(api, reflected)
  const patterns = [...extraPaths.map(templateToRegExp), ...reflected.patterns]
  const unshaped = [...extraPaths.map(templateToRegExp), ...reflected.unshaped]
  return {
    endpoints: reflected.endpoints,
    allowsPath: (path) => patterns.some((pattern) => pattern.test(path)),
    unshapedPath: (path) => unshaped.some((pattern) => pattern.test(path))
  }
}

const reflect = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
): Reflected => {
  const endpoints = new Map<string, EndpointInfo>()
  const patterns: Array<RegExp> = []
  const unshaped: Array<RegExp> = []
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, mergedAnnotations, middleware }) => {
      const urlParams = endpoint.urlParamsSchema
      const keys = new Set([...middleware].map((tag) => tag.key))
      const scope = Option.getOrUndefined(Context.getOption(mergedAnnotations, RequiredScope))
      const style: RejectionStyle | undefined = keys.has(PlainRequestShape.key)
        ? "plain"
        : keys.has(JsonRequestShape.key)
        ? "json"
        : undefined
      if (keys.has(Authentication.key)) {
        const where = `endpoint ${endpoint.name} of group ${group.identifier}`
        if (scope === undefined) throw new Error(`${where} declares no scope`)
        if (style === undefined) throw new Error(`${where} has no request-shape middleware to check its scope`)
      }
      patterns.push(templateToRegExp(endpoint.path))
      if (style === undefined) {
        unshaped.push(templateToRegExp(endpoint.path))
        return
      }
      const hasPayload = Option.isSome(endpoint.payloadSchema)
      const decodeInput = compileInputDecoder(endpoint as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps)
      endpoints.set(`${endpoint.method} ${endpoint.path}`, {
        method: endpoint.method,
        path: endpoint.path,
        style,
        tooLargeStyle: style === "json" && hasPayload ? "json" : "plain",
        bodyLimit: Context.getOption(mergedAnnotations, BodyLimit).pipe(Option.getOrElse(() => MiB)),
        hasPayload,
        scope: keys.has(Authentication.key) ? scope : undefined,
        checkQuery: compileQuery(urlParams as unknown as Option.Option<Schema.Schema<any, any, never>>),
        // The body is read (`request.json`, a getter that starts reading) only when the endpoint has a payload.
        decodeRequest: (request, params) =>
          Effect.asVoid(decodeInput(params, Effect.suspend(() => Effect.orDie(request.json)), request.headers)),
        decodeInput,
        decodePayloadNow: compilePayloadDecoderNow(endpoint as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps)
      })
    }
  })
  return { endpoints, patterns, unshaped }
}
