/**
 * Runs and credit, counted at the HTTP layer from each run answer (`POST /v1/runs`, `POST /v1/router/select`): its
 * status, the wire code of an error answer and the request's timing marks (a new run reaches the model, so its
 * `upstream` mark is set; a replay never does). Outcomes: `completed` (a new run answered 200), `replayed` (200 or
 * 202 from a stored run), `refused` (402/429: credit or quota refused at admission), `rejected` (other 4xx),
 * `failed` (an admitted run that ended in an error: it settles `failed` when a model call occurred, else stays
 * `pending`), `error` (the service could not serve it: database, internal), and `shed` (src/server/Overload.ts). Credit
 * admissions count each new run admitted and each 402/429 refusal by its code. Exact settlement states belong to
 * the ledger; this is what the caller was told.
 */
import type { HttpServerRequest, HttpServerResponse } from "effect/http"
import { count, creditAdmissions, labels, LabelSets, runs } from "../telemetry/Metrics.js"
import { pathOf } from "./RouteLabels.js"

/** The mark of a run request this module reads: set once the run reached the model (a replay never does). */
export interface RunMarks {
  readonly upstreamMs?: number
}

const ServiceErrors = new Set(["database_unavailable", "internal_error", "auth_unavailable"])

const runSeries = new LabelSets((key) => {
  const [route, outcome, code] = key.split(" ") as [string, string, string]
  return labels({ route, outcome, code })
})

const creditSeries = new LabelSets((key) => {
  const [route, result, code] = key.split(" ") as [string, string, string]
  return labels({ route, result, code })
})

const EnvelopeCode = /^\{"error":\{"code":"([a-z_]{1,64})"/

/** The wire code of a JSON error envelope (read from the start of the body only), or `none`. */
export const errorCodeOf = (response: HttpServerResponse.HttpServerResponse): string => {
  const body = response.body
  if (body._tag !== "Uint8Array") return "none"
  const bytes = body.body
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 96)).toString("latin1")
  return EnvelopeCode.exec(head)?.[1] ?? "none"
}

/** The outcome label of a run answer. */
export const runOutcome = (status: number, code: string, marks: RunMarks): string =>
  status < 300
    ? marks.upstreamMs === undefined ? "replayed" : "completed"
    : status === 402 || status === 429
    ? "refused"
    : status < 500
    ? "rejected"
    : ServiceErrors.has(code)
    ? "error"
    : "failed"

/** Counts one run answer (a pre-response handler calls it with the response about to be sent). */
export const countRunAnswer = (
  request: HttpServerRequest.HttpServerRequest,
  response: HttpServerResponse.HttpServerResponse,
  marks: RunMarks
): void => {
  const status = response.status
  countRunStatus(pathOf(request.url), status, status < 400 ? "none" : errorCodeOf(response), marks)
}

/** Counts one run answer of a route, by its status and wire code (`none` on a success). */
export const countRunStatus = (route: string, status: number, code: string, marks: RunMarks): void => {
  const outcome = runOutcome(status, code, marks)
  count(runs, runSeries.get(`${route} ${outcome} ${code}`))
  if (outcome === "refused") count(creditAdmissions, creditSeries.get(`${route} refused ${code}`))
  else if (marks.upstreamMs !== undefined) count(creditAdmissions, creditSeries.get(`${route} admitted none`))
}
