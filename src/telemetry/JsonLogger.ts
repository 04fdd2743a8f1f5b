/**
 * `LOG_FORMAT=json`: one JSON object a line, every field at the top level, as log shippers index them: `time` (ISO
 * 8601), `level` (`trace`, `debug`, `info`, `warn`, `error`, `fatal`), `msg`, then `request_id`, `trace_id` and
 * `span_id` where known, then the line's annotations each under its own name (an access line's `method`, `route`,
 * `status`, `duration_ms`), then `cause` (the pretty cause) when the line has one. A line written inside a request
 * gets `request_id` and `trace_id` from the request log context (RequestLogContext.ts); a line written inside an
 * exported span gets that span's `trace_id` and `span_id`. An annotation never replaces `time`, `level` or `msg`.
 */
import { Cause, Context, Formatter, Logger, Option, References, Tracer } from "effect"
import type * as Fiber from "effect/Fiber"

const Reserved = new Set(["time", "level", "msg", "cause"])

/** A message part as text: strings as they are, errors by their message, anything else formatted. */
const text = (part: unknown): string =>
  typeof part === "string" ? part : part instanceof Error ? part.message : Formatter.format(part)

/** The innermost span of the fiber that goes somewhere (tracing off leaves no-op spans). */
const currentSpan = (fiber: Fiber.Fiber<unknown, unknown>): Tracer.AnySpan | undefined => {
  let span = Context.getOption(fiber.context, Tracer.ParentSpan)
  while (Option.isSome(span)) {
    if (span.value.traceId !== "noop") return span.value
    span = span.value._tag === "Span" ? span.value.parent : Option.none()
  }
  return undefined
}

/** A log line as one flat JSON object (before serialization). */
export const flatRecord = (options: Logger.Options<unknown>): Record<string, unknown> => {
  const { cause, date, fiber, logLevel, message } = options
  const parts = Array.isArray(message) ? message : [message]
  const line: Record<string, unknown> = Object.create(null)
  line.time = date.toISOString()
  line.level = logLevel.toLowerCase()
  line.msg = parts.map(text).join(" ")
  const annotations = fiber.getRef(References.CurrentLogAnnotations)
  if (annotations.request_id !== undefined) line.request_id = annotations.request_id
  const span = currentSpan(fiber)
  const traceId = annotations.trace_id ?? span?.traceId
  if (traceId !== undefined) line.trace_id = traceId
  if (span !== undefined) line.span_id = span.spanId
  for (const [key, value] of Object.entries(annotations)) {
    if (!Reserved.has(key) && !(key in line)) line[key] = value
  }
  if (cause.reasons.length > 0) line.cause = Cause.pretty(cause)
  return line
}

/** The flat JSON line of a log entry. */
export const formatFlatJson: Logger.Logger<unknown, string> = Logger.make((options) => Formatter.formatJson(flatRecord(options)))

/** Flat JSON lines on the console (stdout). */
export const consoleFlatJson: Logger.Logger<unknown, void> = Logger.withConsoleLog(formatFlatJson)
