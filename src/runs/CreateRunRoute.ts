/**
 * `POST /v1/runs` as a direct route (src/http/DirectRoutes.ts): the run's request served on Node's request and
 * response, outside the Effect runtime where nothing is refused, with the API's own pieces in the API's order (check
 * order: credential, what the headers say against the body, the scope, then the body read, then decoding; then the
 * handler of RunsHttp.ts):
 * `CredentialVerifier.known` or `authenticate` (src/auth/Authenticate.ts), `readJsonPayloadNow` (RequestShape.ts),
 * the endpoint's decoders from the route table (RouteTable.ts: the payload's alone, as its headers schema refuses no
 * request; HttpApi's whole decoding words a refusal) and `checkScope`. A run answered 200 or 202 is written
 * here with the headers the API gives it (`content-type`, `content-length`, the CORS headers, `x-request-id`,
 * `Server-Timing`) and counted as the API counts it. Every failure is handed back to the API, which answers it
 * through its edge and error encoding exactly as if its router had served the request: a failure of the handler with
 * the run's `Server-Timing` (and `Retry-After` on `key_rate_limited`), one before it without, as there. The run's
 * work (admission, the model, settlement) is the run's flow (`Runs.startHere`, src/runs/RunExecution.ts `runNow`):
 * plain code whose Effects (the decision engine, admission's slow ways, the access line) run in fibers carrying the
 * request's id and the caller's trace; its deadline answers from a timer while the work goes on to settle the run.
 * While spans are exported (an OTLP endpoint set), the route is not taken: the API serves it under the platform's
 * request span.
 */
import { Cause, Effect, Exit, Layer, Result } from "effect"
import { type Headers, type HttpServerResponse, HttpTraceContext } from "effect/http"
import type { IncomingMessage, ServerResponse } from "node:http"
import { Api } from "../../schema/Api.js"
import { Actor, type ActorShape } from "../../schema/Auth.js"
import type { RunRequest } from "../../schema/RunsApi.js"
import { authenticate, bearerToken } from "../auth/Authenticate.js"
import { CredentialVerifier } from "../auth/CredentialVerifier.js"
import { checkScope } from "../auth/Scopes.js"
import { AppConfig } from "../config/AppConfig.js"
import { makeCors } from "../http/Cors.js"
import { type DirectRoute, DirectRoutes, type DirectServer } from "../http/DirectRoutes.js"
import { requestIdFor } from "../http/RequestId.js"
import { takeOnceRead } from "../http/Overload.js"
import type { BodyRejection } from "../http/Rejection.js"
import { type JsonPayload, payloadHeadersRefusal, readJsonPayloadNow, UploadAbortedMessage } from "../http/RequestShape.js"
import { withRetryAfter } from "../http/RetryAfter.js"
import { type DecodedInput, type EndpointInfo, makeRouteTable } from "../http/RouteTable.js"
import { countRunStatus } from "../http/RunMetrics.js"
import { newTimingMarks, serverTimingValue, timeAnswer, type TimingMarks } from "../http/ServerTiming.js"
import type { RunOutcome } from "./RunExecution.js"
import { type RunFibers, runFibers } from "./RunFibers.js"
import { Runs, type RunsService } from "./Runs.js"
import { answerStatus } from "./RunView.js"
import { spansExported } from "../telemetry/Spans.js"

const RunsUrl = "/v1/runs"

/** How the route ends a request: the run written here, or an answer handed back to the API. */
type Ending =
  | {
    readonly _tag: "Written"
    readonly status: number
    readonly headers: Readonly<Record<string, string>>
    readonly body: string
  }
  | { readonly _tag: "HandedBack"; readonly answer: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown> }

/**
 * A failure for the API to answer: decoding failures in the route's JSON style (the edge's style when no route set
 * one, Rejection.ts' `CurrentStyle`: a handed-back answer runs no route); a failure of the handler with the run's
 * `Server-Timing` and its `Retry-After`, as RunsHttp.ts registers them.
 */
const handedBack = (cause: Cause.Cause<unknown>, marks: TimingMarks | undefined): Ending => ({
  _tag: "HandedBack",
  answer: marks === undefined
    ? Effect.failCause(cause)
    : Effect.andThen(timeAnswer(marks), withRetryAfter(Effect.failCause(cause)))
})

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

/** The caller and the decoded payload. */
interface Accepted {
  readonly actor: ActorShape
  readonly payload: RunRequest
}

/**
 * The caller and the decoded payload, checked in the API's order, outside the runtime where nothing is refused: a key
 * this process authenticated within its second (`CredentialVerifier.known`), what the headers say against the body
 * (`payloadHeadersRefusal`), a granted scope (both before the body is read: decisions.md, "Slow clients"), the body
 * read and checked (`readJsonPayloadNow`), the overload guard's decision once it has been (`takeOnceRead`: a shed run
 * is answered there), its payload decoded without the runtime (`decodePayloadNow`). Whatever is not known at once or
 * is refused goes through the API's own pieces, in a fiber of the request's: `authenticate` looks a key up or words
 * its refusal, HttpApi's decoders word a body's, `checkScope` a scope's; `done` then gets their failure, as the API's
 * middlewares would fail. A client gone before its body arrived is logged at debug level and `done` is not called.
 */
const accept = (context: RunRoute, raw: IncomingMessage, fibers: RunFibers, done: (exit: Exit.Exit<Accepted, unknown>) => void) => {
  const withInput = (actor: ActorShape, input: DecodedInput) => done(Exit.succeed({ actor, payload: input.payload as RunRequest }))
  const withBody = (actor: ActorShape, body: Exit.Exit<JsonPayload, BodyRejection>) => {
    if (Exit.isFailure(body)) return done(Exit.failCause(body.cause))
    if (!takeOnceRead(raw, true)) return
    // The body alone decides: the route's headers schema refuses no request (test/runs/CreateRunRoute.test.ts).
    const input = context.info.decodePayloadNow(body.value.value)
    if (input !== undefined) return withInput(actor, { payload: input.payload, headers: undefined })
    fibers.fork(context.info.decodeInput({}, Effect.succeed(body.value.value), raw.headers)).addObserver((decoded) =>
      Exit.isSuccess(decoded) ? withInput(actor, decoded.value) : done(Exit.failCause(decoded.cause))
    )
  }
  const withActor = (actor: ActorShape) => {
    const refused = payloadHeadersRefusal(raw, context.info)
    if (refused !== undefined) return done(Exit.fail(refused))
    if (!actor.scopes.has(context.scope)) {
      const denied = Effect.provideService(checkScope(context.scope, Effect.void), Actor, actor)
      return void fibers.fork(Effect.andThen(denied, Effect.die("a scope denied was granted")) as Effect.Effect<Accepted, unknown>).addObserver(done)
    }
    readJsonPayloadNow(raw, context.info, (body) => withBody(actor, body), () => fibers.fork(Effect.logDebug(UploadAbortedMessage)))
  }
  const authorization = header(raw.headers.authorization)
  const token = bearerToken(authorization)
  const known = token === undefined ? undefined : context.verifier.known(token)
  if (known !== undefined) return void withActor(known)
  fibers.fork(authenticate(context.verifier, authorization)).addObserver((exit) =>
    Exit.isSuccess(exit) ? void withActor(exit.value) : done(Exit.failCause(exit.cause))
  )
}

/** The headers the API sends a run with: its body's, the edge's (CORS, request id), then `Server-Timing`. */
const runHeaders = (context: RunRoute, raw: IncomingMessage, requestId: string, body: string, marks: TimingMarks) => {
  const cors = context.cors.responseHeaders(header(raw.headers.origin))
  return {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
    ...cors,
    "x-request-id": requestId,
    "server-timing": serverTimingValue(marks)
  }
}

/** The run's answer, written here: counted and timed as the API counts and times an answer, its access line logged. */
const written = (context: RunRoute, raw: IncomingMessage, fibers: RunFibers, requestId: string, started: number, outcome: RunOutcome, marks: TimingMarks): Ending => {
  const view = context.runs.view(outcome)
  const status = answerStatus(view)
  const body = JSON.stringify(view)
  const headers = runHeaders(context, raw, requestId, body, marks)
  countRunStatus(RunsUrl, status, "none", marks)
  const accessLine = context.server.observe("POST", RunsUrl, status, performance.now() - started)
  if (accessLine !== undefined) fibers.fork(accessLine)
  return { _tag: "Written", status, headers, body }
}

/**
 * The request, outside the runtime: accepted (`accept`), then the run's work (`Runs.startHere`: admission, the model,
 * settlement, whose Effects run in fibers of the request's); `end` is called once with how the request is to be
 * answered: the run written here, or a failure handed back to the API (one before the run starts without its
 * `Server-Timing`, one of the run with it, and the deadline's from the run's timer while its work goes on).
 */
const serve = (
  context: RunRoute,
  raw: IncomingMessage,
  requestId: string,
  started: number,
  fibers: RunFibers,
  end: (ending: Ending) => void
) =>
  accept(context, raw, fibers, (accepted) => {
    try {
      if (Exit.isFailure(accepted)) return end(handedBack(accepted.cause, undefined))
      const { actor, payload } = accepted.value
      const marks = newTimingMarks()
      const answer = (ran: Exit.Exit<RunOutcome, unknown>) => {
        try {
          end(Exit.isFailure(ran) ? handedBack(ran.cause, marks) : written(context, raw, fibers, requestId, started, ran.value, marks))
        } catch (defect) {
          end(handedBack(Cause.die(defect), marks))
        }
      }
      const refused = context.runs.startHere(actor, payload, header(raw.headers["idempotency-key"]), marks, fibers, answer)
      if (Result.isFailure(refused)) end(handedBack(Cause.fail(refused.failure), marks))
    } catch (defect) {
      end(handedBack(Cause.die(defect), undefined))
    }
  })

/** The route's handler on a server. */
const handler = (context: Omit<RunRoute, "server">) => (server: DirectServer) => {
  const route: RunRoute = { ...context, server }
  return (request: IncomingMessage, response: ServerResponse) => {
    const started = performance.now()
    const requestId = requestIdFor(header(request.headers["x-request-id"]))
    // The caller's trace (`traceparent`, B3) is the run's parent span, as the platform's request span would be:
    // the request's log lines carry its trace id (RequestLogContext.ts).
    const caller = HttpTraceContext.fromHeaders(request.headers as Headers.Headers)
    const fibers = runFibers(server.runtime, { requestId, parentSpan: caller._tag === "None" ? undefined : caller.value })
    let ended = false
    const end = (ending: Ending) => {
      if (ended) return
      ended = true
      if (ending._tag === "Written") {
        response.writeHead(ending.status, ending.headers)
        response.end(ending.body)
        return
      }
      // The API's edge fixes the request id from this header: it must be the one the run was logged with.
      if (request.headers["x-request-id"] !== requestId) request.headers["x-request-id"] = requestId
      server.viaApi(request, response, ending.answer)
    }
    serve(route, request, requestId, started, fibers, end)
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
