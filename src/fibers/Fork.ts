/**
 * How code outside the Effect runtime (the run's flow, the ledger's admission, the decision engine, a provider's
 * `readNow`) runs the parts that are Effects: each in a fiber of its own, made by a `Fork` its caller hands over, so
 * the fiber carries the caller's services, request id, loggers and parent span (`forkOf` a fiber, or `runFibers` in
 * src/runs/RunFibers.ts for a request served outside the runtime). The caller watches the fiber's end with
 * `addObserver`.
 */
import { Effect, type Fiber } from "effect"

/** Runs an effect in a fiber of the caller's; nothing interrupts it. */
export type Fork = <A, E>(effect: Effect.Effect<A, E>) => Fiber.Fiber<A, E>

/**
 * A `Fork` making fibers as `fiber`'s own children would see the world: its context, which holds its services and
 * its references (request id, loggers, span, whether spans are kept); for the Effect form of code that runs outside
 * the runtime. The fibers are roots of their own: nothing interrupts them when `fiber` ends.
 */
export const forkOf = (fiber: Fiber.Fiber<unknown, unknown>): Fork => Effect.runForkWith(fiber.context)
