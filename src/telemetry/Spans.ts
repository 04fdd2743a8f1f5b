/**
 * Spans on the hot path at no cost when tracing is off (no exporter, `Layer.setTracerEnabled(false)`): there
 * `Effect.withSpan` still makes a no-op span and provides it around the effect (an uninterruptible acquire-use-release
 * of some twenty runtime steps), and `Effect.annotateCurrentSpan` looks the span up as an effect that fails with a
 * new `NoSuchElementException` (its stack captured) and then ignores the failure. With tracing on, both do exactly
 * what Effect's own do.
 */
import { Context, Effect, FiberRef, Tracer } from "effect"

/** Sets `attributes` on the span the effect runs in, if any (a no-op span keeps none, so it is skipped alike). */
export const annotateSpan = (attributes: Readonly<Record<string, unknown>>): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) => {
    const span = Context.getOption(fiber.currentContext, Tracer.ParentSpan)
    if (span._tag === "Some" && span.value._tag === "Span") {
      for (const key of Object.keys(attributes)) span.value.attribute(key, attributes[key])
    }
    return Effect.void
  })

/** `Effect.withSpan`, run only while tracing is on. */
export const withTracedSpan = (name: string, options?: Tracer.SpanOptions) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime<A, E, R>((fiber) =>
    fiber.getFiberRef(FiberRef.currentTracerEnabled) ? Effect.withSpan(effect, name, options) : effect
  )

/** Effect's default tracer, which keeps its spans to itself: nothing exports them. */
const defaultTracer = Effect.runSync(Effect.tracer)

/** Whether spans made here go anywhere: tracing is on, through a tracer other than Effect's default. */
export const spansExported: Effect.Effect<boolean> = Effect.zipWith(
  FiberRef.get(FiberRef.currentTracerEnabled),
  Effect.tracer,
  (enabled, tracer) => enabled && tracer !== defaultTracer
)
