/**
 * The contract's errors as the edge (ErrorBoundary.ts) answers them, encoded as an endpoint encodes its own: the JSON
 * envelope of the code (`wire`) or the plain-text rejection (`wireText`), with its status and content type.
 */
import { Effect, Schema, type SchemaAST } from "effect"
import { HttpServerResponse } from "effect/http"
import {
  ErrorClasses,
  JsonDataRejection,
  JsonSyntaxRejection,
  PayloadTooLargeRejection,
  QueryStringRejection,
  UnsupportedMediaTypeRejection,
  wire,
  wireText
} from "../../schema/Errors.js"

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

/** Whether an error is one of the contract's (a code, or a plain-text rejection). */
export const isContractError = (error: unknown): boolean => {
  const tag = tagOf(error)
  return tag !== undefined && encodings.has(tag)
}

/** The response of one of the contract's errors; undefined for any other value. */
export const contractErrorResponse = (
  error: unknown
): Effect.Effect<HttpServerResponse.HttpServerResponse, Schema.SchemaError> | undefined => {
  const tag = tagOf(error)
  const encoding = tag === undefined ? undefined : encodings.get(tag)
  if (encoding === undefined) return undefined
  return Effect.map(encoding.encode(error), (body) => encoding.respond(body, encoding.status))
}
