/**
 * What the `/v1` groups share at the boundary: a request-shape middleware that checks size, content type, the body's
 * JSON and the query before a body is decoded, and provides the request the handler decodes (the body already parsed,
 * see src/http/RequestShape.ts). It comes in the contract's two rejection styles (spec, "Plain-text rejections"): the
 * keys, billing and usage groups answer body and query problems in axum's plain text; the runs and router groups
 * answer them with the JSON `invalid_body` envelope. A body over the limit is the JSON `413 body_too_large` only on
 * the two large-body routes (`POST /v1/runs`, `POST /v1/router/select`) and the plain-text 413 on every other route,
 * the runs and router GET routes included. A group picks its style by its middleware.
 */
import type { HttpServerRequest } from "effect/http"
import { HttpApiMiddleware } from "effect/http-api"
import {
  BodyTooLarge,
  InvalidBody,
  JsonDataRejection,
  JsonSyntaxRejection,
  PayloadTooLargeRejection,
  QueryStringRejection,
  UnsupportedMediaTypeRejection,
  wire,
  wireText
} from "./Errors.js"

/** The answers of {@link PlainRequestShape}. */
export const PlainRequestShapeErrors = [
  wireText(JsonSyntaxRejection),
  wireText(QueryStringRejection),
  wireText(PayloadTooLargeRejection),
  wireText(UnsupportedMediaTypeRejection),
  wireText(JsonDataRejection)
] as const

/** Request shape with axum-style plain-text rejections (400 parse, 400 query, 413, 415, 422). */
export class PlainRequestShape extends HttpApiMiddleware.Service<PlainRequestShape, {
  provides: HttpServerRequest.HttpServerRequest
}>()("PlainRequestShape", { error: PlainRequestShapeErrors }) {}

/** The answers of {@link JsonRequestShape}. */
export const JsonRequestShapeErrors = [
  wire(InvalidBody),
  wire(BodyTooLarge),
  wireText(PayloadTooLargeRejection)
] as const

/**
 * Request shape with JSON rejections (`400 invalid_body`, `413 body_too_large` on the large-body routes), and the
 * plain-text 413 on the group's routes without a body.
 */
export class JsonRequestShape extends HttpApiMiddleware.Service<JsonRequestShape, {
  provides: HttpServerRequest.HttpServerRequest
}>()("JsonRequestShape", { error: JsonRequestShapeErrors }) {}
