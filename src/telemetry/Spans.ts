/**
 * Spans on the hot path at no cost when tracing is off (no exporter, `References.TracerEnabled` false): there
 * `Effect.withSpan` still makes a span that goes nowhere and provides it around the effect. With tracing on, both do
 * exactly what Effect's own do.
 */
import { Effect, References, Tracer } from "effect"

/** Sets `attributes` on the span the effect runs in, if any. */
export const annotateSpan = (attributes: Readonly<Record<string, unknown>>): Effect.Effect<void> =>
  Effect.annotateCurrentSpan(attributes)

/** `Effect.withSpan`, run only while tracing is on. */
export const withTracedSpan = (name: string, options?: Tracer.SpanOptions) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber<A, E, R>((fiber) =>
    fiber.getRef(References.TracerEnabled) ? Effect.withSpan(effect, name, options) : effect
  )

/** Whether spans made here go anywhere: tracing is on, through a tracer other than Effect's native one. */
export const spansExported: Effect.Effect<boolean> = Effect.withFiber((fiber) =>
  Effect.succeed(fiber.getRef(References.TracerEnabled) && fiber.getRef(Tracer.Tracer) !== Tracer.nativeTracer)
)
