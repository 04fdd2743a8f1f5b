/**
 * `POST /v1/runs` as a direct route (src/http/DirectRoutes.ts): the run's request served in one fiber on Node's
 * request and response, with the API's own pieces in the API's order (check order: credential, then the body's
 * shape, then decoding, then the scope; then the handler of RunsHttp.ts): `authenticate` (src/auth/Authenticate.ts),
 * `readJsonPayload` (RequestShape.ts), the endpoint's decoders from the route table (RouteTable.ts) and `checkScope`.
 * A run answered 200 or 202 is written here with the headers the API gives it (`content-type`, `content-length`, the
 * CORS headers, `x-request-id`, `Server-Timing`) and counted as the API counts it. Every failure is handed back to the
 * API, which answers it through its edge and error encoding exactly as if its router had served the request: a
 * failure of the handler with the run's `Server-Timing` (and `Retry-After` on `key_rate_limited`), one before it
 * without, as there. The run's work (admission, the model, settlement) goes on in the same fiber (`Runs.createHere`),
 * a root fiber nothing interrupts, so a run takes one fiber where the router's way takes two; its deadline answers
 * from a timer while the fiber goes on to settle the run. While spans are exported (an OTLP endpoint set), the route
 * is not taken: the API serves it under the platform's request span.
 */
import { type Headers, type HttpServerResponse, HttpTraceContext } from "@effect/platform"
import { Cause, Effect, type FiberId, FiberRef, FiberRefs, Layer, Runtime, Tracer } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { Api } from "../../schema/Api.js"
import { Actor } from "../../schema/Auth.js"
import { CurrentRequestId } from "../../schema/Errors.js"
import type { RunRequest } from "../../schema/RunsApi.js"
import { authenticate } from "../auth/Authenticate.js"
import { CredentialVerifier } from "../auth/CredentialVerifier.js"
import { checkScope } from "../auth/Scopes.js"
import { AppConfig } from "../config/AppConfig.js"
import { makeCors } from "../http/Cors.js"
import { type DirectRoute, DirectRoutes, type DirectServer } from "../http/DirectRoutes.js"
import { CurrentStyle } from "../http/Rejection.js"
import { requestIdFor } from "../http/RequestId.js"
import { readJsonPayload } from "../http/RequestShape.js"
import { withRetryAfter } from "../http/RetryAfter.js"
import { type EndpointInfo, makeRouteTable } from "../http/RouteTable.js"
import { countRunStatus } from "../http/RunMetrics.js"
import { newTimingMarks, serverTimingValue, timeAnswer, type TimingMarks } from "../http/ServerTiming.js"
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
 * A failure for the API to answer: decoding failures in the route's JSON style; a failure of the handler with the
 * run's `Server-Timing` and its `Retry-After`, as RunsHttp.ts registers them.
 */
const handedBack = (cause: Cause.Cause<unknown>, marks: TimingMarks | undefined): Ending => {
  const failure = marks === undefined
    ? Effect.failCause(cause)
    : Effect.zipRight(timeAnswer(marks), withRetryAfter(Effect.failCause(cause)))
  return { _tag: "HandedBack", answer: Effect.zipRight(FiberRef.set(CurrentStyle, "json"), failure) }
}

const header = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : undefined

/** What the route works with: the services, the endpoint as the route table describes it, CORS and the server. */
interface RunRoute {
  readonly runs: RunsService
  readonly verifier: CredentialVerifier["Type"]
  readonly info: EndpointInfo
  readonly scope: NonNullable<EndpointInfo["scope"]>
  readonly cors: ReturnType<typeof makeCors>
  readonly server: DirectServer
}

/** The caller and the decoded payload, checked in the API's order; fails as the API's middlewares would. */
const accept = (context: RunRoute, raw: IncomingMessage) =>
  Effect.gen(function*() {
    const actor = yield* authenticate(context.verifier, header(raw.headers.authorization))
    const body = yield* readJsonPayload(raw, context.info)
    // Decoded without the runtime when it decodes; HttpApi's decoders say why when it does not.
    const input = context.info.decodeInputNow({}, body.value, raw.headers) ??
      (yield* context.info.decodeInput({}, Effect.succeed(body.value), raw.headers))
    // A granted scope costs nothing more; `checkScope` words the refusal.
    if (!actor.scopes.has(context.scope)) yield* Effect.provideService(checkScope(context.scope, Effect.void), Actor, actor)
    return { actor, payload: input.payload as RunRequest }
  })

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

/**
 * The request in the route's fiber, which also does the run's work (`Runs.createHere`): ends with how the request is
 * to be answered, or `null` when the run's deadline passed first and `onDeadline` was given the answer (from a timer,
 * while the fiber goes on to settle the run).
 */
const serve = (
  context: RunRoute,
  raw: IncomingMessage,
  requestId: string,
  started: number,
  onDeadline: (ending: Ending) => void
) =>
  Effect.gen(function*() {
    const accepted = yield* Effect.exit(accept(context, raw))
    if (accepted._tag === "Failure") return handedBack(accepted.cause, undefined)
    const { actor, payload } = accepted.value
    const marks = newTimingMarks()
    const created = yield* Effect.exit(
      context.runs.createHere(actor, payload, header(raw.headers["idempotency-key"]), marks, (error) =>
        onDeadline(handedBack(Cause.fail(error), marks)))
    )
    if (created._tag === "Failure") return handedBack(created.cause, marks)
    const ran = created.value
    if (ran === null) return null
    if (ran._tag === "Failure") return handedBack(ran.cause, marks)
    const view = context.runs.view(ran.value)
    const status = answerStatus(view)
    const body = JSON.stringify(view)
    const headers = runHeaders(context, raw, requestId, body, marks)
    countRunStatus(RunsUrl, status, "none", marks)
    yield* context.server.observe("POST", RunsUrl, status, performance.now() - started)
    return { _tag: "Written", status, headers, body } satisfies Ending
  })

/** The route's handler on a server. */
const handler = (context: Omit<RunRoute, "server">) => (server: DirectServer) => {
  const route: RunRoute = { ...context, server }
  const runFork = Runtime.runFork(server.runtime)
  return (request: IncomingMessage, response: ServerResponse) => {
    const started = performance.now()
    const requestId = requestIdFor(header(request.headers["x-request-id"]))
    const updateRefs = (refs: FiberRefs.FiberRefs, id: FiberId.Runtime) =>
      FiberRefs.updateManyAs(refs, { entries: [[CurrentRequestId, [[id, requestId]]]] })
    // The caller's trace (`traceparent`, B3) is the run's parent span, as the platform's request span would be:
    // the request's log lines carry its trace id (RequestLogContext.ts).
    const caller = HttpTraceContext.fromHeaders(request.headers as Headers.Headers)
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
    const served = serve(route, request, requestId, started, end)
    const fiber = runFork(
      caller._tag === "None" ? served : Effect.provideService(served, Tracer.ParentSpan, caller.value),
      { updateRefs }
    )
    fiber.addObserver((exit) => {
      if (exit._tag === "Failure") end(handedBack(exit.cause, undefined))
      else if (exit.value !== null) end(exit.value)
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
      return yield* Effect.dieMessage(`the API declares no authenticated POST ${RunsUrl}`)
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
