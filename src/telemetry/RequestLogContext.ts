/**
 * Log lines written while a request is handled carry `request_id` (the id the response's `x-request-id` carries,
 * which the error boundary fixes as the request starts) and `trace_id` (the W3C trace id of the request's span:
 * with tracing on, the exported span's, the caller's when it sent `traceparent`; with tracing off, the caller's
 * `traceparent` trace id, or else one derived from the request id: the 32 hex digits of a generated `req_` id, or
 * the first 32 hex digits of the SHA-256 of a caller's own id, so every line of one request shares it). Both are
 * read from the fiber as each line is written, by a wrapper around every logger: a request that logs nothing pays
 * nothing. Fibers forked by the request inherit both.
 */
import { createHash } from "node:crypto"
import { Context, Effect, type Fiber, Logger, Option, References, Tracer } from "effect"
import { HttpServerRequest, HttpTraceContext } from "effect/http"
import { CurrentRequestId } from "../../schema/Errors.js"

const GeneratedId = /^req_([0-9a-f]{32})$/

const derivedTraceId = (requestId: string): string => {
  const generated = GeneratedId.exec(requestId)
  return generated !== null ? generated[1]! : createHash("sha256").update(requestId).digest("hex").slice(0, 32)
}

/** The trace id of the current span, skipping the no-op spans tracing leaves when it is off. */
const spanTraceId = (fiber: Fiber.Fiber<unknown, unknown>): string | undefined => {
  let span = Context.getOption(fiber.context, Tracer.ParentSpan)
  while (Option.isSome(span)) {
    if (span.value.traceId !== "noop") return span.value.traceId
    span = span.value._tag === "Span" ? span.value.parent : Option.none()
  }
  return undefined
}

/** The trace id of the caller's `traceparent` on the request the fiber serves (tracing off makes no span of it). */
const callerTraceId = (fiber: Fiber.Fiber<unknown, unknown>): string | undefined => {
  const request = Context.getOption(fiber.context, HttpServerRequest.HttpServerRequest)
  if (Option.isNone(request) || request.value.headers.traceparent === undefined) return undefined
  return Option.getOrUndefined(Option.map(HttpTraceContext.fromHeaders(request.value.headers), (span) => span.traceId))
}

/**
 * The fiber as a logger sees it, its log annotations with `request_id` and `trace_id` added: loggers read a line's
 * annotations from the fiber (`References.CurrentLogAnnotations`), so the line is given a view of the fiber whose
 * annotations hold both, and the fiber itself is left as it is.
 */
const withIds = (fiber: Fiber.Fiber<unknown, unknown>, requestId: string): Fiber.Fiber<unknown, unknown> => {
  const annotations = {
    ...fiber.getRef(References.CurrentLogAnnotations),
    request_id: requestId,
    trace_id: spanTraceId(fiber) ?? callerTraceId(fiber) ?? derivedTraceId(requestId)
  }
  return Object.create(fiber, {
    getRef: {
      value: <A>(ref: Context.Reference<A>): A =>
        ref === (References.CurrentLogAnnotations as unknown) ? annotations as A : fiber.getRef(ref)
    }
  })
}

/** A logger that adds `request_id` and `trace_id` to every line written inside a request. */
export const withRequestContext = <Message, Output>(logger: Logger.Logger<Message, Output>): Logger.Logger<Message, Output> =>
  Logger.make((options) => {
    const requestId = options.fiber.getRef(CurrentRequestId)
    return logger.log(requestId === "" ? options : { ...options, fiber: withIds(options.fiber, requestId) })
  })

/** Wraps every logger of the current fiber for the rest of the scope (the server's, before it starts serving). */
export const requestLogContext = Effect.updateServiceScoped(
  Logger.CurrentLoggers,
  (loggers) => new Set([...loggers].map((logger) => withRequestContext(logger)))
)
