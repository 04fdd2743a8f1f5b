/**
 * An adaptive concurrency limit for the runs routes, in the spirit of Netflix concurrency-limits and Envoy's adaptive
 * concurrency filter, against a time budget: while the service's recent own time per request (its total less the time
 * it waited for the upstream model, so a slow upstream never shrinks the limit) stays within the budget, the limit
 * probes upwards by a headroom of its square root, and only when it is actually reached; past the budget the process
 * is saturated and completes runs at its capacity, so the limit goes to the requests in flight whose time is the
 * budget by Little's law: the completion rate times the budget. Pure bookkeeping; the guard (Overload.ts) sheds what
 * exceeds it.
 *
 * A budget, not Gradient2's ratio of a long-run time to the recent one: the limit exists to keep deadlines, and runs
 * that merely share a core after a quiet spell are not queueing (a load that grows slowly would also teach the
 * long-run time its own queueing). Little's law, not a gradient step on every slow sample: the requests taken under a
 * higher limit end one by one, each still slow, long after the limit came down, and stepping on each would take it to
 * its minimum, while a saturated process's completion rate does not depend on how late its requests end. A warm-up:
 * a fresh process serves its first runs at a fraction of its capacity (V8 still interprets, the pool opens its
 * connections, the first leases are granted), so for its first `warmupMs` of completions the limit does not shrink.
 */

/** Bounds, budget and smoothing of the limit. */
export interface LimitOptions {
  readonly initial: number
  readonly min: number
  readonly max: number
  /** Own time (ms) a request may take while the process keeps up: the limit shrinks once the recent time exceeds it. */
  readonly budgetMs: number
  /** Weight of a new sample in the recent time. */
  readonly fastWeight: number
  /** How much of a newly computed limit replaces the old one. */
  readonly smoothing: number
  /**
   * How busy the event loop is lately, 0 to 1 (its utilization). The limit shrinks only while it is at least
   * `BusyLoop`: a process whose runs are slow while its loop idles is waiting (on a lock, on the database), and
   * fewer runs in flight would not make them faster, only fewer.
   */
  readonly loopBusy?: () => number
  /** How long (ms) after its first completion the limit does not shrink: the process is still warming up. */
  readonly warmupMs: number
}

/** The event loop utilization from which a process counts as saturated. */
const BusyLoop = 0.9

/**
 * Defaults: start at 64 in flight, between 8 and 4,096; half a second of own time per request, well within the
 * shortest deadline a run sets; three seconds of warm-up.
 */
export const DefaultLimitOptions: LimitOptions = {
  initial: 64,
  min: 8,
  max: 4_096,
  budgetMs: 500,
  fastWeight: 0.1,
  smoothing: 0.2,
  warmupMs: 3_000
}

/** How long (ms) completions are counted before they update the completion rate. */
const RateWindowMs = 100

/** A window longer than this (ms) spanned a quiet stretch. */
const IdleWindowMs = 1_000

/** Weight of a window's rate in the completion rate. */
const RateWeight = 0.3

export class AdaptiveLimit {
  private limitValue: number
  private fast = 0
  /** Completions per ms, smoothed over windows of `RateWindowMs`; 0 until the first window ends. */
  private rate = 0
  private windowStart = -1
  private windowCount = 0
  /** When the first completion was recorded; NaN before it. */
  private firstAt = Number.NaN

  constructor(private readonly options: LimitOptions = DefaultLimitOptions) {
    this.limitValue = options.initial
  }

  get limit(): number {
    return Math.floor(this.limitValue)
  }

  /**
   * Records one request's own time (ms), with how many were in flight when it started (itself included), at `now`
   * (ms, any monotonic clock).
   */
  record(serviceMs: number, inFlight: number, now: number): void {
    const sample = Math.max(0.01, serviceMs)
    if (Number.isNaN(this.firstAt)) this.firstAt = now
    this.fast = this.fast === 0 ? sample : (1 - this.options.fastWeight) * this.fast + this.options.fastWeight * sample
    this.countCompletion(now)
    if (this.fast <= this.options.budgetMs) {
      // Within the budget: probe upwards, but only from a limit actually reached (far below it, it says nothing).
      if (inFlight < this.limitValue / 2) return
      this.limitValue = Math.min(this.options.max, this.limitValue + this.options.smoothing * Math.sqrt(this.limitValue))
      return
    }
    // Past it: Little's law, once a rate is known and the process is warm and busy (`loopBusy`).
    if (this.rate === 0 || now - this.firstAt < this.options.warmupMs) return
    if (this.options.loopBusy !== undefined && this.options.loopBusy() < BusyLoop) return
    const next = Math.min(this.limitValue, this.rate * this.options.budgetMs)
    this.limitValue = Math.max(this.options.min, (1 - this.options.smoothing) * this.limitValue + this.options.smoothing * next)
  }

  private countCompletion(now: number): void {
    // A window that spans a quiet stretch tells of the quiet, not of the capacity: it starts over instead.
    if (this.windowStart < 0 || now - this.windowStart > IdleWindowMs) {
      this.windowStart = now
      this.windowCount = 0
    }
    this.windowCount++
    const elapsed = now - this.windowStart
    if (elapsed < RateWindowMs) return
    const windowRate = this.windowCount / elapsed
    this.rate = this.rate === 0 ? windowRate : (1 - RateWeight) * this.rate + RateWeight * windowRate
    this.windowStart = now
    this.windowCount = 0
  }
}
