/**
 * Attributes on the current span, as `Effect.annotateCurrentSpan` sets them, without its cost when the span is a
 * no-op one (tracing off, no exporter): that looks the span up as an effect which fails with a
 * `NoSuchElementException` (a new Error, its stack captured) and then ignores the failure, three times on every run.
 * A no-op span takes attributes and keeps none, so setting them on it is the same as skipping it.
 */
import { Context, Effect, Tracer } from "effect"

/** Sets `attributes` on the span the effect runs in, if any. */
export const annotateSpan = (attributes: Readonly<Record<string, unknown>>): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) => {
    const span = Context.getOption(fiber.currentContext, Tracer.ParentSpan)
    if (span._tag === "Some" && span.value._tag === "Span") {
      for (const key of Object.keys(attributes)) span.value.attribute(key, attributes[key])
    }
    return Effect.void
  })
