/**
 * Usage and quota for the read routes (decisions.md, "Usage and quota" and "Precise rules"): the rollup (whole, or by
 * key or model: UsageGroups.ts), the ledger (pages by offset or keyset) and its export (every entry of the window,
 * read in keyset pages of {@link ExportPageSize} as the consumer pulls them), the daily series (every UTC day of the
 * window, zero-filled), one run's usage and the current month's quota. Windows arrive already checked (Window.ts);
 * database failures are `503 database_unavailable`.
 */
import { Context, Effect, Layer, Option, Stream } from "effect"
import { type DatabaseUnavailable, RunNotFound } from "../../schema/Errors.js"
import { type Keyset, parseRunId } from "../runs/RunView.js"
import { periodOf, QuotaLedger, type QuotaState } from "../ledger/QuotaLedger.js"
import type { LedgerQuery } from "./LedgerPaging.js"
import { type GroupBy, type GroupRow, totalOf } from "./UsageGroups.js"
import {
  type DayRow,
  type LedgerPageRow,
  type LedgerRow,
  type RollupRow,
  type RunUsage,
  UsageRepo,
  type UsageRepoService
} from "./UsageRepo.js"
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

/** A page of the ledger, and the position of its last entry when more entries follow it. */
export interface LedgerPage {
  readonly entries: ReadonlyArray<LedgerRow>
  readonly next: Option.Option<Keyset>
}

/** A rollup broken down into groups: the groups, and the rollup as their sum (one snapshot, so they always agree). */
export interface GroupedRollup {
  readonly totals: RollupRow
  readonly groups: ReadonlyArray<GroupRow>
}

/** Entries one read of the export fetches (one chunk of the response). */
export const ExportPageSize = 1_000

const keysetOf = (row: LedgerPageRow): Keyset => ({ at: row.keyset_at, id: row.entry_id })

const nextAfter = (rows: ReadonlyArray<LedgerPageRow>, size: number): Option.Option<Keyset> =>
  rows.length < size ? Option.none() : Option.some(keysetOf(rows[rows.length - 1]!))

/**
 * Every entry of a window, newest first, in keyset pages read one at a time as the stream is pulled: the first page
 * is read before the stream is returned (so an unavailable database is still an answer), each later one only when
 * the consumer has taken the previous one.
 */
const ledgerPages = (repo: UsageRepoService, organizationId: string, window: Window, keyId: string | null) => {
  const read = (start: LedgerQuery["start"]) => repo.ledger(organizationId, window, ExportPageSize, { keyId, start })
  return Effect.map(read({ _tag: "Offset", offset: 0 }), (first) =>
    Stream.concat(
      Stream.make(first),
      Stream.unfold(nextAfter(first, ExportPageSize), (next) =>
        Option.match(next, {
          onNone: () => Effect.undefined,
          onSome: (key) => Effect.map(read({ _tag: "After", key }), (page) => [page, nextAfter(page, ExportPageSize)] as const)
        }))
    ).pipe(Stream.filter((page) => page.length > 0)))
}

/** The usage and quota reads' operations. */
export interface UsageService {
  /** Runs, tokens and spend of the runs created in the window. */
  readonly rollup: (organizationId: string, window: Window) => Effect.Effect<RollupRow, DatabaseUnavailable>
  /** The window's rollup per key or per model, largest settled spend first, with the rollup they sum to. */
  readonly grouped: (
    organizationId: string,
    window: Window,
    by: GroupBy
  ) => Effect.Effect<GroupedRollup, DatabaseUnavailable>
  /** Up to `limit` model calls recorded in the window, newest first, filtered and started as `query` says. */
  readonly ledger: (
    organizationId: string,
    window: Window,
    limit: number,
    query: LedgerQuery
  ) => Effect.Effect<LedgerPage, DatabaseUnavailable>
  /** Every model call recorded in the window (of one key's runs, or all), newest first, a page at a time. */
  readonly exportLedger: (
    organizationId: string,
    window: Window,
    keyId: string | null
  ) => Effect.Effect<Stream.Stream<ReadonlyArray<LedgerRow>, DatabaseUnavailable>, DatabaseUnavailable>
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
    grouped: (organizationId, window, by) =>
      Effect.map(repo.groups(organizationId, window, by), (groups) => ({ totals: totalOf(groups), groups })),
    ledger: (organizationId, window, limit, query) =>
      Effect.map(repo.ledger(organizationId, window, limit + 1, query), (rows) => ({
        entries: rows.slice(0, limit),
        next: rows.length > limit ? Option.some(keysetOf(rows[limit - 1]!)) : Option.none()
      })),
    exportLedger: (organizationId, window, keyId) => ledgerPages(repo, organizationId, window, keyId),
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
      Effect.map(quota.read(organizationId, periodOf(now)), (state): QuotaView => ({
        ...state,
        period: monthOf(now),
        spendRemainingMicros: remaining(state.spendLimitMicros, state.spendSettledMicros, state.spendReservedMicros),
        tokensRemaining: remaining(state.tokenLimit, state.tokensSettled, state.tokensReserved)
      }))
  })
})

/** The usage and quota reads. */
export class Usage extends Context.Service<Usage, UsageService>()("Usage") {
  /** The service over the usage repository and the quota ledger. */
  static readonly layer = Layer.effect(Usage, make)
}
