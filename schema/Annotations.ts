/**
 * Contract annotations read by the boundary: the body limit of an endpoint. (Its rejection style is the request-shape
 * middleware its group carries, see Boundary.ts; its scope is `RequiredScope`, see Scope.ts.)
 */
import { Context } from "effect"

/** How body and query problems are answered: axum-style plain text, or the JSON `invalid_body` envelope. */
export type RejectionStyle = "plain" | "json"

/** Endpoint annotation: the most bytes its body may hold (default 1 MiB). */
export class BodyLimit extends Context.Service<BodyLimit, number>()("arbiter/BodyLimit") {}

/** One mebibyte, the default body limit (spec, Limits). */
export const MiB = 1024 * 1024

/** The body limit of `POST /v1/runs` and `POST /v1/router/select` (spec, Limits: 4 MiB). */
export const LargeBodyLimit = 4 * MiB
