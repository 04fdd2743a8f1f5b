/**
 * The wording of body and query rejections, in both styles of the contract: axum's plain-text bodies on the keys,
 * billing and usage routes, the JSON `invalid_body` / `body_too_large` envelope on the runs and router routes.
 */
import { type Schema, SchemaIssue } from "effect"
import type { IncomingMessage } from "node:http"
import type { RejectionStyle } from "../../schema/Annotations.js"
import {
  BodyTooLarge,
  InvalidBody,
  JsonDataRejection,
  JsonSyntaxRejection,
  PayloadTooLargeRejection,
  QueryStringRejection,
  UnsupportedMediaTypeRejection
} from "../../schema/Errors.js"

/**
 * The rejection style of the matched route by request (the Node request under it): set by RequestShape, read by the
 * edge after decoding failed, which runs outside the route's middleware and so sees nothing the middleware provides.
 */
export const CurrentStyle = new WeakMap<IncomingMessage, RejectionStyle>()

/** Schema's wording of an issue, but a missing or unexpected key in the words the rejection names fields by. */
const leafHook: SchemaIssue.LeafHook = (issue) =>
  issue._tag === "MissingKey" ? "is missing" : issue._tag === "UnexpectedKey" ? "is unexpected" : SchemaIssue.defaultLeafHook(issue)

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1({ leafHook })

/** The first issue of a schema failure in words, e.g. `unknown field "foo"` or `deadline_ms: Expected ...`. */
export const describeParseError = (error: Schema.SchemaError | SchemaIssue.Issue): string => {
  const first = formatIssues("issue" in error ? error.issue : error).issues[0]
  if (first === undefined) return "does not match the schema"
  const path = (first.path ?? []).map((key) => String(typeof key === "object" ? key.key : key)).join(".")
  const { message } = first
  // A struct with fields says `is unexpected, expected: "a" | "b"`; the rejection names the field either way.
  if (message === "is unexpected" || message.startsWith("is unexpected,")) return `unknown field "${path}"`
  if (message === "is missing") return `missing field "${path}"`
  return path === "" ? message : `${path}: ${message}`
}

/** Body over the route's limit. */
export const tooLarge = (style: RejectionStyle, limit: number): BodyTooLarge | PayloadTooLargeRejection =>
  style === "json"
    ? new BodyTooLarge({ message: `request body is over the limit of ${limit} bytes` })
    : new PayloadTooLargeRejection({ text: "Failed to buffer the request body: length limit exceeded" })

/** Missing or wrong content type. */
export const wrongContentType = (style: RejectionStyle): InvalidBody | UnsupportedMediaTypeRejection =>
  style === "json"
    ? new InvalidBody({ message: "Content-Type must be application/json" })
    : new UnsupportedMediaTypeRejection({ text: "Expected request with `Content-Type: application/json`" })

/** Body that is not JSON (or is empty). */
export const notJson = (style: RejectionStyle, detail: string): InvalidBody | JsonSyntaxRejection =>
  style === "json"
    ? new InvalidBody({ message: `request body is not valid JSON: ${detail}` })
    : new JsonSyntaxRejection({ text: `Failed to parse the request body as JSON: ${detail}` })

/** Query string with an unknown or malformed parameter. */
export const badQuery = (style: RejectionStyle, detail: string): InvalidBody | QueryStringRejection =>
  style === "json"
    ? new InvalidBody({ message: `invalid query string: ${detail}` })
    : new QueryStringRejection({ text: `Failed to deserialize query string: ${detail}` })

/** JSON body that does not match the route's schema. */
export const badBody = (style: RejectionStyle, detail: string): InvalidBody | JsonDataRejection =>
  style === "json"
    ? new InvalidBody({ message: `invalid request body: ${detail}` })
    : new JsonDataRejection({ text: `Failed to deserialize the JSON body into the target type: ${detail}` })

/** Any rejection of a request's body, in either style. */
export type BodyRejection =
  | ReturnType<typeof tooLarge>
  | ReturnType<typeof wrongContentType>
  | ReturnType<typeof notJson>
  | ReturnType<typeof badBody>
