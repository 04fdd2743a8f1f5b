/**
 * Where a run's Effects run while its flow runs outside the runtime (RunExecution.ts): fibers nothing interrupts,
 * made from the server's services with the request's id, loggers and parent span added to their context once per
 * request (not by `Effect.provideService` and `withParentSpan` around each fiber's work: each of those is more steps
 * of the runtime per fiber), the clock of those services, and whether spans are kept.
 */
import { Clock, Context, Effect, References, Tracer } from "effect"
import { CurrentRequestId } from "../../schema/Errors.js"
import type { EngineFibers } from "./DecisionEngine.js"

/**
 * Where the run's Effects run: fibers nothing interrupts, made with the request's id, loggers and parent span
 * (`fork`), the clock (`now`), and whether spans are kept (`traced`: the parts of the run then run inside their spans).
 */
export type RunFibers = EngineFibers

/** The loggers a fiber logs with (`References.CurrentLoggers`). */
type Loggers = typeof References.CurrentLoggers extends Context.Reference<infer A> ? A : never

/** Fibers for a run's Effects, from `services`, with the given request id, loggers and parent span. */
export const runFibers = (
  services: Context.Context<never>,
  refs: {
    readonly requestId: string
    readonly loggers?: Loggers | undefined
    readonly parentSpan?: Tracer.AnySpan | undefined
  }
): RunFibers => {
  let context = Context.add(services, CurrentRequestId, refs.requestId)
  if (refs.loggers !== undefined) context = Context.add(context, References.CurrentLoggers, refs.loggers)
  if (refs.parentSpan !== undefined) context = Context.add(context, Tracer.ParentSpan, refs.parentSpan)
  const clock = Context.get(services, Clock.Clock)
  return {
    fork: Effect.runForkWith(context),
    now: () => clock.currentTimeMillisUnsafe(),
    traced: Context.get(services, References.TracerEnabled)
  }
}
