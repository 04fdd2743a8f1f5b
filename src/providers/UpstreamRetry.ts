/**
 * When a failed upstream attempt is tried again, as an Effect `Schedule`: exponential backoff from the base delay
 * (doubling, at most 8 s), jittered to 50-100% of it, at most `maxRetries` times, only for a retryable failure;
 * when the upstream sent `Retry-After` (seconds, or an HTTP date), the wait is at least that long. A wait that
 * would end at or past the run's deadline is not taken: the schedule stops, and the call fails at once with the
 * last attempt's error (`provider_rate_limited`, `provider_unavailable`, ...) rather than sleeping towards a
 * deadline no retry could meet. The deadline check reads the Clock when the decision is made (the step's `now`).
 */
import { Duration, Effect, Random, Schedule } from "effect"
import type { ProviderError } from "./ModelProvider.js"

/** Why an attempt failed in a way worth retrying. */
export type FailureKind = "rate_limited" | "unavailable" | "bad_response" | "timeout"

/** How an attempt failed: retryable (with what the upstream asked for) or final. */
export type AttemptFailure =
  | {
    readonly _tag: "Retryable"
    readonly kind: FailureKind
    readonly detail: string
    /** Attempts made so far, this one included. */
    readonly attempts: number
    /** The wait the upstream's `Retry-After` asked for, in ms. */
    readonly retryAfterMs: number | undefined
  }
  | { readonly _tag: "Final"; readonly error: ProviderError }

/** Longest backoff before jitter. */
export const MaxBackoffMs = 8_000

const DeltaSeconds = /^\d+(\.\d+)?$/

/**
 * The wait a `Retry-After` value asks for, in ms from `now`: delta-seconds, or an HTTP date (a date in the past is
 * 0); undefined when absent or unreadable.
 */
export const retryAfterMs = (value: string | null, now: number): number | undefined => {
  if (value === null) return undefined
  const text = value.trim()
  if (DeltaSeconds.test(text)) return Math.round(Number(text) * 1000)
  if (!/[A-Za-z]/.test(text)) return undefined
  const at = Date.parse(text)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/** The retry schedule of one call, whose inputs are its attempts' failures and whose output is the next wait. */
export const retrySchedule = (options: {
  readonly maxRetries: number
  readonly baseDelayMs: number
  readonly deadline: number
}): Schedule.Schedule<Duration.Duration, AttemptFailure> => {
  // Capped, then jittered to 50-100% of the capped delay.
  const backoff = Schedule.exponential(Duration.millis(options.baseDelayMs)).pipe(
    Schedule.modifyDelay(({ duration }) => {
      const capped = Duration.min(duration, Duration.millis(MaxBackoffMs))
      return Effect.map(Random.next, (random) => Duration.times(capped, 0.5 + 0.5 * random))
    })
  )
  return Schedule.max([backoff, Schedule.recurs(options.maxRetries)]).pipe(
    Schedule.setInputType<AttemptFailure>(),
    Schedule.while(({ input }) => input._tag === "Retryable"),
    Schedule.modifyDelay(({ duration, input }) => {
      const asked = input._tag === "Retryable" ? input.retryAfterMs : undefined
      return Effect.succeed(asked !== undefined && asked > Duration.toMillis(duration) ? Duration.millis(asked) : duration)
    }),
    Schedule.while(({ duration, now }) => now + Duration.toMillis(duration) < options.deadline),
    Schedule.map(({ duration }) => duration)
  )
}

/**
 * The retries of a call whose first attempt failed with `first`: `attempt(previous)` tried on the retry schedule,
 * fed each failure as `Effect.retry` would feed it, until one answers, a failure is final, or the schedule stops (the
 * call then fails with the last failure). The caller makes the first attempt on its own, so the schedule's step (its
 * state, and the sleep before each attempt) is built only once one failed, as almost no call needs it.
 */
export const retryFrom = <A>(
  first: AttemptFailure,
  attempt: (previous: AttemptFailure) => Effect.Effect<A, AttemptFailure>,
  options: { readonly maxRetries: number; readonly baseDelayMs: number; readonly deadline: number }
): Effect.Effect<A, AttemptFailure> =>
  first._tag !== "Retryable" ? Effect.fail(first) : Effect.flatMap(Schedule.toStepWithSleep(retrySchedule(options)), (step) => {
    // The step fails only when the schedule is done (it has no error of its own): the call fails with `failure`.
    const loop = (failure: AttemptFailure): Effect.Effect<A, AttemptFailure> =>
      Effect.matchEffect(step(failure), {
        onFailure: () => Effect.fail(failure),
        onSuccess: () => Effect.catch(attempt(failure), loop)
      })
    return loop(first)
  })
