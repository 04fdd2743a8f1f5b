/**
 * `POST /v1/runs` as a direct route (DirectRoutes.ts says why). The route runs the API's own pieces in the API's check
 * order, as one Effect program in a fiber of the request's: the credential (`authenticate`), what the headers say
 * against the body (`payloadHeadersRefusal`), the scope (`checkScope`), the body read and checked (`readJsonPayload`),
 * the overload guard's decision once it has been read (`takeOnceRead`: a shed run is answered there), the endpoint's
 * decoding from the route table (`decodeInput`), then the handler's own function (`Runs.create`, as RunsHttp.ts calls
 * it). A run answered 200 or 202 is written here with the headers the API gives it (`content-type`, `content-length`,
 * the CORS headers, `x-request-id`, `Server-Timing`) and counted as the API counts it. Every failure, typed as the
 * endpoint's declared errors (`CreateRunFailure`: a new failure must be declared or the build fails), is handed back to
 * the API, which answers it through its edge and error encoding exactly as if its router had served the request: a
 * failure of the handler with the run's `Server-Timing` (and `Retry-After` on `key_rate_limited`), one before it
 * without, as there. While spans are exported (an OTLP endpoint set), the route is not taken: the API serves the run
 * under the platform's request span, so every trace has the API's shape.
 */
import { Cause, Context, Effect, Exit, Layer, Tracer } from "effect"
import { type Headers, type HttpServerResponse, HttpTraceContext } from "effect/http"
import type { HttpApiEndpoint, HttpApiError, HttpApiGroup } from "effect/http-api"
import type { IncomingMessage, ServerResponse } from "node:http"
import { Api } from "../../schema/Api.js"
import { Actor } from "../../schema/Auth.js"
import { type BodyTooLarge, CurrentRequestId, type InvalidBody } from "../../schema/Errors.js"
import type { RunRequest, RunsApi } from "../../schema/RunsApi.js"
import { authenticate } from "../auth/Authenticate.js"
import { CredentialVerifier } from "../auth/CredentialVerifier.js"
import { checkScope } from "../auth/Scopes.js"
import { AppConfig } from "../config/AppConfig.js"
import { makeCors } from "../http/Cors.js"
import { type DirectRoute, DirectRoutes, type DirectServer } from "./DirectRoutes.js"
import { takeOnceRead } from "../http/ShedOnceRead.js"
import type { BodyRejection } from "../http/Rejection.js"
import { requestIdFor } from "../http/RequestId.js"
import { payloadHeadersRefusal, readJsonPayload } from "../http/RequestShape.js"
import { withRetryAfter } from "../http/RetryAfter.js"
import { type EndpointInfo, makeRouteTable } from "../http/RouteTable.js"
import { countRunStatus } from "../http/RunMetrics.js"
import { newTimingMarks, serverTimingValue, timeAnswer, type TimingMarks } from "../http/ServerTiming.js"
import { spansExported } from "../telemetry/Spans.js"
import type { RunOutcome } from "../runs/RunExecution.js"
import { Runs, type RunsService } from "../runs/Runs.js"
import { answerStatus } from "../runs/RunView.js"

const RunsUrl = "/v1/runs"

/** The endpoint the route serves. */
type CreateRunEndpoint = HttpApiEndpoint.WithIdentifier<HttpApiGroup.Endpoints<typeof RunsApi>, "create">

/**
 * What the route may hand back to the API: the endpoint's declared errors (its own and its middlewares'), and
 * HttpApi's decoding failure, which the edge words in the route's style as for any request.
 */
export type CreateRunFailure = HttpApiEndpoint.Errors<CreateRunEndpoint> | HttpApiError.HttpApiSchemaError

const header = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : undefined

/** What the route works with: the services, the endpoint as the route table describes it, CORS and the server. */
interface RunRoute {
  readonly runs: RunsService
  readonly verifier: CredentialVerifier["Service"]
  readonly info: EndpointInfo
  readonly scope: NonNullable<EndpointInfo["scope"]>
  readonly cors: ReturnType<typeof makeCors>
  readonly server: DirectServer
}

/** One request through the route: the Node request, its id, when it started, and the run's marks once it starts. */
interface RouteRequest {
  readonly raw: IncomingMessage
  readonly requestId: string
  readonly started: number
  marks: TimingMarks | undefined
}

/**
 * A rejection of the body in the endpoint's JSON style, as the route table gives it for this endpoint; the plain-text
 * rejections of other routes cannot arise here.
 */
const inJsonStyle = <A>(effect: Effect.Effect<A, BodyRejection>): Effect.Effect<A, InvalidBody | BodyTooLarge> =>
  Effect.catch(effect, (rejection) =>
    rejection._tag === "invalid_body" || rejection._tag === "body_too_large"
      ? Effect.fail(rejection)
      : Effect.die(new Error(`a plain-text ${rejection._tag} on ${RunsUrl}, a JSON route`)))

/**
 * The request in the API's check order, then the run: its outcome, or undefined when the overload guard shed it
 * once its body was read (the guard has answered it).
 */
const serve = (route: RunRoute, request: RouteRequest): Effect.Effect<RunOutcome | undefined, CreateRunFailure> => {
  const { raw } = request
  return Effect.flatMap(authenticate(route.verifier, header(raw.headers.authorization)), (actor) => {
    const refused = payloadHeadersRefusal(raw, route.info)
    if (refused !== undefined) return inJsonStyle(Effect.fail(refused))
    const reading = Effect.andThen(
      Effect.provideService(checkScope(route.scope, Effect.void), Actor, actor),
      inJsonStyle(readJsonPayload(raw, route.info))
    )
    return Effect.flatMap(reading, (body) => {
      if (!takeOnceRead(raw, true)) return Effect.undefined
      return Effect.flatMap(route.info.decodeInput({}, Effect.succeed(body.value), raw.headers), (input) => {
        const marks = request.marks = newTimingMarks()
        return route.runs.create(actor, input.payload as RunRequest, header(raw.headers["idempotency-key"]), marks)
      })
    })
  })
}

/** The run's answer, written here: counted and timed as the API counts and times an answer, its access line logged. */
const write = (route: RunRoute, request: RouteRequest, outcome: RunOutcome, response: ServerResponse) => {
  const marks = request.marks!
  const view = route.runs.view(outcome)
  const status = answerStatus(view)
  const body = JSON.stringify(view)
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
    ...route.cors.responseHeaders(header(request.raw.headers.origin)),
    "x-request-id": request.requestId,
    "server-timing": serverTimingValue(marks)
  })
  response.end(body)
  countRunStatus(RunsUrl, status, "none", marks)
  return route.server.observe("POST", RunsUrl, status, performance.now() - request.started)
}

/**
 * A failure handed back to the API: one of the handler with the run's `Server-Timing` and its `Retry-After`, as
 * RunsHttp.ts registers them; one before it without.
 */
const handedBack = (request: RouteRequest, cause: Cause.Cause<CreateRunFailure>): Effect.Effect<HttpServerResponse.HttpServerResponse, CreateRunFailure> =>
  request.marks === undefined
    ? Effect.failCause(cause)
    : Effect.andThen(timeAnswer(request.marks), withRetryAfter(Effect.failCause(cause)))

/** The route's handler on a server: each request in a fiber carrying its id and the caller's trace as its parent. */
const handler = (context: Omit<RunRoute, "server">) => (server: DirectServer) => {
  const route: RunRoute = { ...context, server }
  return (raw: IncomingMessage, response: ServerResponse) => {
    const request: RouteRequest = {
      raw,
      requestId: requestIdFor(header(raw.headers["x-request-id"])),
      started: performance.now(),
      marks: undefined
    }
    // The caller's trace (`traceparent`, B3) is the run's parent span, as the platform's request span would be.
    const caller = HttpTraceContext.fromHeaders(raw.headers as Headers.Headers)
    let services = Context.add(server.runtime, CurrentRequestId, request.requestId)
    if (caller._tag === "Some") services = Context.add(services, Tracer.ParentSpan, caller.value)
    const fork = Effect.runForkWith(services)
    fork(serve(route, request)).addObserver((exit) => {
      if (Exit.isSuccess(exit)) {
        if (exit.value === undefined) return
        const accessLine = write(route, request, exit.value, response)
        if (accessLine !== undefined) fork(accessLine)
        return
      }
      // Interrupted only: the client went away before its body arrived (logged at debug level by the reader), or the
      // server is stopping; nothing to answer.
      if (Cause.hasInterruptsOnly(exit.cause)) return
      // The API's edge fixes the request id from this header: it must be the one the run was logged with.
      if (raw.headers["x-request-id"] !== request.requestId) raw.headers["x-request-id"] = request.requestId
      server.viaApi(raw, response, handedBack(request, exit.cause))
    })
  }
}

/** `POST /v1/runs` served directly, unless spans are exported (then the API serves it, request span and all). */
export const CreateRunRouteLive = Layer.effect(
  DirectRoutes,
  Effect.gen(function*() {
    if (yield* spansExported) return []
    const info = makeRouteTable(Api).endpoints.get(`POST ${RunsUrl}`)
    if (info === undefined || info.scope === undefined) {
      return yield* Effect.die(new Error(`the API declares no authenticated POST ${RunsUrl}`))
    }
    const context = {
      runs: yield* Runs,
      verifier: yield* CredentialVerifier,
      info,
      scope: info.scope,
      cors: makeCors((yield* AppConfig).corsAllowedOrigins)
    }
    return [{ method: "POST", url: RunsUrl, make: handler(context) }] satisfies ReadonlyArray<DirectRoute>
  })
)
