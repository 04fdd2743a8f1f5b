/**
 * What the boundary knows about each endpoint, computed once from the HttpApi definition: its rejection style, body
 * limit, whether it takes a body, its compiled query decoder, its required scope and how HttpApi will decode its
 * request. An authenticated endpoint without a scope, or whose group has no request-shape middleware to check it,
 * stops the start. Also answers "does any route serve this path with another method?", which turns the router's
 * miss into 405 instead of 404.
 */
import { Context, Effect, Option, Result, Schema, type SchemaAST } from "effect"
import type { HttpServerRequest } from "effect/http"
import { HttpApi, type HttpApiEndpoint, HttpApiError, type HttpApiGroup } from "effect/http-api"
import { BodyLimit, MiB, type RejectionStyle } from "../../schema/Annotations.js"
import { Authentication } from "../../schema/Auth.js"
import { JsonRequestShape, PlainRequestShape } from "../../schema/Boundary.js"
import { RequiredScope, type Scope } from "../../schema/Scope.js"
import { describeParseError } from "./Rejection.js"
import { type RouteEntry, templateRegExp } from "./RouteLabels.js"

/** A route's path parameters, as the router matched them. */
export type RouteParams = Readonly<Record<string, string | undefined>>

/** The boundary's view of one endpoint. */
export interface EndpointInfo {
  readonly method: string
  readonly path: string
  readonly style: RejectionStyle
  /** How a body over `bodyLimit` is refused: JSON only on a JSON-style route that takes a body, else plain text. */
  readonly tooLargeStyle: RejectionStyle
  readonly bodyLimit: number
  readonly hasPayload: boolean
  /** The scope an authenticated endpoint requires; undefined on an endpoint without authentication. */
  readonly scope: Scope | undefined
  /** Checks the query string; the first problem in words, or undefined when it is acceptable. */
  readonly checkQuery: (query: Readonly<Record<string, unknown>>) => string | undefined
  /** Decodes the path, the parsed body and the headers as HttpApi does; the query is `checkQuery`'s. */
  readonly decodeRequest: (
    request: HttpServerRequest.HttpServerRequest,
    params: RouteParams
  ) => Effect.Effect<void, HttpApiError.HttpApiSchemaError>
  /** The same decoding of the parts given, answering the payload and headers (src/server/CreateRunRoute.ts). */
  readonly decodeInput: InputDecoder
}

/** An endpoint's payload and headers as HttpApi decodes them (undefined where the endpoint declares none). */
export interface DecodedInput {
  readonly payload: unknown
  readonly headers: unknown
}

/**
 * Endpoints with a request shape by `METHOD path` (the router's template), plus path matchers for 405 detection and
 * every route's method and template (the extra paths' under any method, `*`), which metrics and logs label requests by.
 */
export interface RouteTable {
  readonly endpoints: ReadonlyMap<string, EndpointInfo>
  readonly routes: ReadonlyArray<RouteEntry>
  readonly allowsPath: (path: string) => boolean
  /** A path served without a request shape (health, the documents): the edge holds its body to 1 MiB. */
  readonly unshapedPath: (path: string) => boolean
}

/** Each part's own parse options, else the API's general ones (`HttpApi.ParseOptions`), as HttpApi falls back. */
const slotOptions = (annotations: Context.Context<never>) => {
  const fallback = Option.getOrUndefined(Context.getOption(annotations, HttpApi.ParseOptions))
  const slot = (key: Context.Key<any, SchemaAST.ParseOptions>) =>
    Option.getOrElse(Context.getOption(annotations, key), () => fallback)
  return {
    params: slot(HttpApi.ParamsParseOptions),
    query: slot(HttpApi.QueryParseOptions),
    headers: slot(HttpApi.HeadersParseOptions),
    payload: slot(HttpApi.PayloadParseOptions)
  }
}

type AnySchema = Schema.Codec<unknown, unknown>

const compileQuery = (schema: Schema.Top | undefined, options: SchemaAST.ParseOptions | undefined) => {
  if (schema === undefined) {
    return (query: Readonly<Record<string, unknown>>) => {
      const first = Object.keys(query)[0]
      return first === undefined ? undefined : `unknown field "${first}"`
    }
  }
  const decode = Schema.decodeUnknownResult(Schema.toCodecArrayFromSingle(schema) as unknown as AnySchema, {
    ...options,
    errors: "first"
  })
  return (query: Readonly<Record<string, unknown>>) => {
    const result = decode(query)
    return Result.isFailure(result) ? describeParseError(result.failure) : undefined
  }
}

/** The schema of an endpoint's JSON payload (the union of its members, as HttpApi decodes it), if it has one. */
const payloadSchema = (endpoint: HttpApiEndpoint.Top): Schema.Top | undefined => {
  const json = endpoint.payload.get("application/json")
  if (json === undefined || json.encoding._tag === "Stream") return undefined
  return json.schemas.length === 1 ? json.schemas[0] : Schema.Union(json.schemas)
}

const decoder = (schema: Schema.Top | undefined, options: SchemaAST.ParseOptions | undefined) =>
  schema === undefined ? undefined : Schema.decodeUnknownEffect(schema as unknown as AnySchema, options)

/** Decodes the parts given (the body as an effect, read only when the endpoint has a payload), as HttpApi does. */
type InputDecoder = (
  params: RouteParams,
  body: Effect.Effect<unknown>,
  headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
) => Effect.Effect<DecodedInput, HttpApiError.HttpApiSchemaError>

const compileInputDecoder = (endpoint: HttpApiEndpoint.Top, options: ReturnType<typeof slotOptions>): InputDecoder => {
  const path = decoder(endpoint.params, options.params)
  const payload = decoder(payloadSchema(endpoint), options.payload)
  const headers = decoder(endpoint.headers, options.headers)
  const decodeHeaders = (given: Parameters<InputDecoder>[2], decodedPayload: unknown): Effect.Effect<DecodedInput, HttpApiError.HttpApiSchemaError> =>
    headers === undefined
      ? Effect.succeed({ payload: decodedPayload, headers: undefined })
      : Effect.mapEager(HttpApiError.HttpApiSchemaError.wrap("Headers", headers(given)), (decodedHeaders) => ({
        payload: decodedPayload,
        headers: decodedHeaders
      }))
  const decodeRest = (body: Effect.Effect<unknown>, given: Parameters<InputDecoder>[2]) =>
    payload === undefined
      ? decodeHeaders(given, undefined)
      : Effect.flatMapEager(
        HttpApiError.HttpApiSchemaError.wrap("Payload", Effect.flatMapEager(body, payload)),
        (decodedPayload) => decodeHeaders(given, decodedPayload)
      )
  return (params, body, given) =>
    path === undefined
      ? decodeRest(body, given)
      : Effect.flatMapEager(HttpApiError.HttpApiSchemaError.wrap("Params", path(params)), () => decodeRest(body, given))
}

const endpointInfo = (
  endpoint: HttpApiEndpoint.Top,
  annotations: Context.Context<never>,
  style: RejectionStyle,
  scope: Scope | undefined
): EndpointInfo => {
  const options = slotOptions(annotations)
  const hasPayload = endpoint.payload.size > 0
  const decodeInput = compileInputDecoder(endpoint, options)
  return {
    method: endpoint.method,
    path: endpoint.path,
    style,
    tooLargeStyle: style === "json" && hasPayload ? "json" : "plain",
    bodyLimit: Option.getOrElse(Context.getOption(annotations, BodyLimit), () => MiB),
    hasPayload,
    scope,
    checkQuery: compileQuery(endpoint.query, options.query),
    // The body is read (`request.json`, a getter that starts reading) only when the endpoint has a payload.
    decodeRequest: (request, params) =>
      Effect.asVoid(decodeInput(params, Effect.suspend(() => Effect.orDie(request.json)), request.headers)),
    decodeInput
  }
}

/** Each API reflected once per process: the boundary and the direct route share its decoders. */
const reflectedApis = new WeakMap<object, ReturnType<typeof reflect>>()

/** Builds the table of an API; `extraPaths` are routes served outside the API (the OpenAPI document, the docs). */
export const makeRouteTable = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  extraPaths: ReadonlyArray<string> = []
): RouteTable => {
  const reflected = reflectedApis.get(api) ?? reflect(api)
  reflectedApis.set(api, reflected)
  const patterns = [...extraPaths.map(templateRegExp), ...reflected.patterns]
  const unshaped = [...extraPaths.map(templateRegExp), ...reflected.unshaped]
  return {
    endpoints: reflected.endpoints,
    routes: [...reflected.routes, ...extraPaths.map((path) => ({ method: "*", path }))],
    allowsPath: (path) => patterns.some((pattern) => pattern.test(path)),
    unshapedPath: (path) => unshaped.some((pattern) => pattern.test(path))
  }
}

/** An API's endpoints, and the path matchers of all of them and of those without a request shape. */
const reflect = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) => {
  const endpoints = new Map<string, EndpointInfo>()
  const routes: Array<RouteEntry> = []
  const patterns: Array<RegExp> = []
  const unshaped: Array<RegExp> = []
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, mergedAnnotations, middleware }) => {
      const keys = new Set([...middleware].map((service) => service.key))
      const scope = Option.getOrUndefined(Context.getOption(mergedAnnotations, RequiredScope))
      const style: RejectionStyle | undefined = keys.has(PlainRequestShape.key)
        ? "plain"
        : keys.has(JsonRequestShape.key)
        ? "json"
        : undefined
      if (keys.has(Authentication.key)) {
        const where = `endpoint ${endpoint.identifier} of group ${group.identifier}`
        if (scope === undefined) throw new Error(`${where} declares no scope`)
        if (style === undefined) throw new Error(`${where} has no request-shape middleware to check its scope`)
      }
      routes.push({ method: endpoint.method, path: endpoint.path })
      patterns.push(templateRegExp(endpoint.path))
      if (style === undefined) {
        unshaped.push(templateRegExp(endpoint.path))
        return
      }
      endpoints.set(`${endpoint.method} ${endpoint.path}`, endpointInfo(endpoint, mergedAnnotations, style, keys.has(Authentication.key) ? scope : undefined))
    }
  })
  return { endpoints, routes, patterns, unshaped }
}
