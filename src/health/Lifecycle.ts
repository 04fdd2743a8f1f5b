/**
 * Where this process is in its life: serving, or stopping (SIGTERM or SIGINT). Stopping begins with the drain
 * (src/server/Drain.ts): `/readyz` answers 503 from then on (Readiness.ts), and once the listener stops accepting, the
 * in-flight requests and the settlements they leave have until the stop's deadline (`SHUTDOWN_TIMEOUT_MS` after the
 * listener stopped accepting) to finish.
 */
import { Context, Layer } from "effect"

/** This process's stage, shared by the listener, readiness and the ledger. */
export interface LifecycleService {
  /** Whether the process is stopping: set once, never cleared. */
  readonly stopping: () => boolean
  /** Marks the process as stopping (`/readyz` answers 503 from now on). */
  readonly beginStopping: () => void
  /** The time (ms since the epoch) by which in-flight work must have finished and settled; undefined until known. */
  readonly deadline: () => number | undefined
  /** Sets the deadline (once the listener stops accepting). */
  readonly setDeadline: (at: number) => void
}

/** A lifecycle that begins serving. */
export const makeLifecycle = (): LifecycleService => {
  let stopping = false
  let deadline: number | undefined
  return {
    stopping: () => stopping,
    beginStopping: () => void (stopping = true),
    deadline: () => deadline,
    setDeadline: (at) => void (deadline = at)
  }
}

/**
 * The process's lifecycle. The server provides one of its own (Server.ts); code built without a server (the CLI,
 * tests of single services) sees one that never stops.
 */
export const Lifecycle = Context.Reference<LifecycleService>("Lifecycle", { defaultValue: makeLifecycle })

/** A fresh lifecycle, for one server. */
export const LifecycleLive = Layer.sync(Lifecycle, makeLifecycle)
