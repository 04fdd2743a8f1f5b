/**
 * An adaptive concurrency limit for the runs routes, in the spirit of Netflix concurrency-limits' gradient limit:
 * the limit on requests served at once follows the ratio of the service's long-run time per request to its recent
 * time, so it grows while answers come as fast as usual and shrinks as soon as they slow (the process is queueing
 * work it cannot do in time), plus a small headroom that lets it probe upwards. The time measured is the service's
 * own (a request's total less the time it waited for the upstream model), so a slow upstream does not shrink the
 * limit: only this process's saturation does. Pure bookkeeping; the guard (Overload.ts) sheds what exceeds it.
 */

/** Bounds and smoothing of the limit. */
export interface LimitOptions {
  readonly initial: number
  readonly min: number
  readonly max: number
  /** Weight of a new sample in the recent time (fast) and in the long-run time (slow). */
  readonly fastWeight: number
  readonly slowWeight: number
  /** How much of a newly computed limit replaces the old one. */
  readonly smoothing: number
  /**
   * How much slower than its long-run time the service may answer before the limit shrinks (Gradient2's tolerance):
   * a loaded process answers a little slower while it keeps up, and only a clear slowdown means queueing.
   */
  readonly tolerance?: number
}

/** Defaults: start at 64 in flight, between 8 and 4,096. */
export const DefaultLimitOptions: LimitOptions = {
  initial: 64,
  min: 8,
  max: 4_096,
  fastWeight: 0.1,
  slowWeight: 0.002,
  smoothing: 0.2,
  tolerance: 1.5
}

/** A gradient limit. */
export class GradientLimit {
  private limitValue: number
  private fast = 0
  private slow = 0

  constructor(private readonly options: LimitOptions = DefaultLimitOptions) {
    this.limitValue = options.initial
  }

  /** The number of requests that may be served at once now. */
  get limit(): number {
    return Math.floor(this.limitValue)
  }

  /** Records one request's own time (ms) with how many were in flight when it started. */
  record(serviceMs: number, inFlight: number): void {
    const sample = Math.max(0.01, serviceMs)
    if (this.slow === 0) {
      this.fast = sample
      this.slow = sample
      return
    }
    this.fast = (1 - this.options.fastWeight) * this.fast + this.options.fastWeight * sample
    this.slow = (1 - this.options.slowWeight) * this.slow + this.options.slowWeight * sample
    // A long-run time that drifts above the recent one (the load eased) is pulled back down, so it tracks a
    // healthy time instead of remembering a bad stretch.
    if (this.slow > this.fast * 2) this.slow = this.fast * 2
    const gradient = Math.max(0.5, Math.min(1, ((this.options.tolerance ?? 1) * this.slow) / this.fast))
    // Only a limit actually reached tells anything about it: far below it, the limit stays.
    if (inFlight < this.limitValue / 2 && gradient >= 1) return
    const headroom = Math.sqrt(this.limitValue)
    const next = this.limitValue * gradient + headroom
    this.limitValue = Math.min(
      this.options.max,
      Math.max(this.options.min, (1 - this.options.smoothing) * this.limitValue + this.options.smoothing * next)
    )
  }
}
