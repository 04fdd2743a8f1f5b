/**
 * Where a run's Effects run while its flow runs outside the runtime (RunExecution.ts): fibers nothing interrupts,
 * made from the server's runtime with the request's id, loggers and parent span set as each fiber is made (not by
 * `Effect.locally` and `withParentSpan` around its work: each of those is an uninterruptible acquire-use-release of
 * some twenty steps of the runtime), the runtime's clock, and whether spans are kept.
 */
import { Clock, Context, DefaultServices, type FiberId, FiberRef, FiberRefs, Runtime, Tracer } from "effect"
import { CurrentRequestId } from "../../schema/Errors.js"
import type { EngineFibers } from "./DecisionEngine.js"

/**
 * Where the run's Effects run: fibers nothing interrupts, made with the request's id, loggers and parent span
 * (`fork`), the clock (`now`), and whether spans are kept (`traced`: the parts of the run then run inside their spans).
 */
export type RunFibers = EngineFibers

/** Fibers for a run's Effects, from `runtime`, with the given request id, loggers and parent span. */
export const runFibers = (
  runtime: Runtime.Runtime<never>,
  refs: {
    readonly requestId: string
    readonly loggers?: typeof FiberRef.currentLoggers extends FiberRef.FiberRef<infer A> ? A : never
    readonly parentSpan?: Tracer.AnySpan | undefined
  }
): RunFibers => {
  const context = refs.parentSpan === undefined ? runtime.context : Context.add(runtime.context, Tracer.ParentSpan, refs.parentSpan)
  // The fiber's refs are already forked as its own (Runtime.runFork): these are set as its values.
  const updateRefs = (fiberRefs: FiberRefs.FiberRefs, id: FiberId.Runtime) =>
    FiberRefs.updateManyAs(fiberRefs, {
      entries: [
        [CurrentRequestId, [[id, refs.requestId]]],
        ...(refs.loggers === undefined ? [] : [[FiberRef.currentLoggers, [[id, refs.loggers]]]] as const),
        ...(refs.parentSpan === undefined ? [] : [[FiberRef.currentContext, [[id, context]]]] as const)
      ]
    })
  const runFork = Runtime.runFork(runtime)
  const clock = Context.get(FiberRefs.getOrDefault(runtime.fiberRefs, DefaultServices.currentServices), Clock.Clock)
  return {
    fork: (effect) => runFork(effect, { updateRefs }),
    now: () => clock.unsafeCurrentTimeMillis(),
    traced: FiberRefs.getOrDefault(runtime.fiberRefs, FiberRef.currentTracerEnabled)
  }
}
