/**
 * Usage and quota for the read routes (decisions.md, "Usage and quota" and "Precise rules"): the rollup, the ledger,
 * the daily series (every UTC day of the window, zero-filled), one run's usage and the current month's quota. Windows
 * arrive already checked (Window.ts); database failures are `503 database_unavailable`.
 */
import { Context, Effect, Layer, Option } from "effect"
import { type DatabaseUnavailable, RunNotFound } from "../../schema/Errors.js"
import { orUnavailable } from "../db/Unavailable.js"
import { parseRunId } from "../runs/RunView.js"
import { periodOf, QuotaLedger, type QuotaState } from "../ledger/QuotaLedger.js"
import { type DayRow, type LedgerRow, type RollupRow, type RunUsage, UsageRepo } from "./UsageRepo.js"
import { monthOf, type Window } from "./Window.js"

/** The current month's quota: its period, the limits and counters, and what remains under each limit. */
export interface QuotaView extends QuotaState {
  readonly period: Window
  readonly spendRemainingMicros: number | null
  readonly tokensRemaining: number | null
}

/** What remains under a limit (never below zero), or null when there is no limit. */
export const remaining = (limit: number | null, settled: number, reserved: number): number | null =>
  limit === null ? null : Math.max(0, limit - settled - reserved)

/** The usage and quota reads' operations. */
export interface UsageService {
  /** Runs, tokens and spend of the runs created in the window. */
  readonly rollup: (organizationId: string, window: Window) => Effect.Effect<RollupRow, DatabaseUnavailable>
  /** Up to `limit` model calls recorded in the window, newest first. */
  readonly ledger: (organizationId: string, window: Window, limit: number) => Effect.Effect<ReadonlyArray<LedgerRow>, DatabaseUnavailable>
  /**
   * One row per UTC day the window touches, oldest first, zero-filled (the caller bounds the window to 92 days, so
   * at most 93 rows).
   */
  readonly daily: (organizationId: string, window: Window) => Effect.Effect<ReadonlyArray<DayRow>, DatabaseUnavailable>
  /** One run's usage and calls, by either id spelling; `run_not_found` for unknown and other organizations' runs. */
  readonly run: (organizationId: string, runId: string) => Effect.Effect<RunUsage, RunNotFound | DatabaseUnavailable>
  /** The limits, consumption and remaining amounts of the UTC month holding `now`. */
  readonly quota: (organizationId: string, now: Date) => Effect.Effect<QuotaView, DatabaseUnavailable>
}

const make = Effect.gen(function*() {
  const repo = yield* UsageRepo
  const quota = yield* QuotaLedger
  return Usage.of({
    rollup: (organizationId, window) => repo.rollup(organizationId, window),
    ledger: (organizationId, window, limit) => repo.ledger(organizationId, window, limit),
    daily: (organizationId, window) => repo.daily(organizationId, window),
    run: (organizationId, runId) =>
      Effect.gen(function*() {
        const notFound = new RunNotFound({ message: `no run ${runId} in this organization` })
        const uuid = parseRunId(runId)
        if (Option.isNone(uuid)) return yield* notFound
        const found = yield* repo.run(organizationId, uuid.value)
        if (Option.isNone(found)) return yield* notFound
        return found.value
      }),
    quota: (organizationId, now) =>
      Effect.map(orUnavailable(quota.read(organizationId, periodOf(now))), (state): QuotaView => ({
        ...state,
        period: monthOf(now),
        spendRemainingMicros: remaining(state.spendLimitMicros, state.spendSettledMicros, state.spendReservedMicros),
        tokensRemaining: remaining(state.tokenLimit, state.tokensSettled, state.tokensReserved)
      }))
  })
})

/** The usage and quota reads. */
export class Usage extends Context.Tag("Usage")<Usage, UsageService>() {
  /** The service over the usage repository and the quota ledger. */
  static readonly layer = Layer.effect(Usage, make)
}
