/**
 * Settles runs whose process died: a run still holding credit and quota a minute after its deadline can no longer
 * be settled by its own process (which stops reading at the deadline and settles at once). Settlement releases its
 * holds and bills the calls recorded while it ran (CallRecorder): with an answered call it ends `failed` with
 * `deadline_exceeded`, without one it stays `pending` (nothing billed). Safe to run in every process at once:
 * settlement is idempotent and locks accounts in a fixed order.
 */
import { Duration, Effect, Layer, Schedule } from "effect"
import { RunsRepo } from "./RunsRepo.js"
import { Settlement } from "./Settlement.js"

/** How long after its deadline an unsettled run's holds are released. */
export const AbandonedAfterSeconds = 60

/** Releases the holds of abandoned runs once; returns how many. */
export const sweepOnce = Effect.gen(function*() {
  const runs = yield* RunsRepo
  const settlement = yield* Settlement
  const abandoned = yield* runs.abandoned(AbandonedAfterSeconds, 200)
  yield* Effect.forEach(abandoned, (run) =>
    settlement.settle({
      organizationId: run.organization_id,
      id: run.id,
      state: run.answered ? "failed" : "pending",
      output: null,
      outputDigest: null,
      errorCode: run.answered ? "deadline_exceeded" : null,
      errorMessage: run.answered ? "the run's process stopped before the run settled; its answered calls are billed" : null,
      calls: []
    }), { concurrency: 8, discard: true })
  if (abandoned.length > 0) yield* Effect.logWarning(`released the holds of ${abandoned.length} abandoned runs`)
  return abandoned.length
})

/** The sweeper, every 30 seconds for the life of the server. */
export const SweeperLive = Layer.scopedDiscard(
  sweepOnce.pipe(
    Effect.catchAll((error) => Effect.logWarning("sweeper could not run", error)),
    Effect.repeat(Schedule.spaced(Duration.seconds(30))),
    Effect.forkScoped
  )
)
