/**
 * The queue in front of settlement. Runs ending at about the same time share one transaction (group commit: at one
 * in flight a run waits for nothing; under load it pays a share of a commit). A batch PostgreSQL refuses for its data
 * is split in halves, each settled on its own at once, and a refused half again, until the run refused is alone: one
 * bad run never fails the others, and holds each up by a few transactions (at most twice log2 of the batch), not by
 * one per run of its batch. A run refused alone is settled again as `failed` with its calls (their upstream request
 * ids dropped) so its cost is still billed. A batch that fails because the database is unreachable is retried with
 * backoff until it commits: the calls happened and must be billed. Until a run's settlement is being attempted, its
 * end may still be changed (`yieldTo`), so a caller answered with a failure at the deadline never finds the run stored
 * completed. With `groupOf` (`LEDGER_BATCHES=organization`) each organization's runs are settled in batches of their
 * own, `maxInFlight` of them per organization.
 */
import { type Context, Effect, Exit } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import type pg from "pg"
import { isDataError } from "../db/Unavailable.js"
import { count, labels, ledgerRefusedSettlements, ledgerSettlementRetries } from "../telemetry/Metrics.js"
import type { BatchOptions } from "./Batcher.js"
import { type Completion, makeCompletion } from "./Completion.js"
import type { BatchResult, RunEnd, SettleBatch, SettlementInput } from "./Settlement.js"
import { countSettledRun } from "../telemetry/SpendMetrics.js"

/** What became of one run's settlement. */
export interface Settled {
  /** The run's row was found (or stored again) and settled. */
  readonly stored: boolean
  /** The end that was stored (the caller's, the one it yielded to, or the failure PostgreSQL left it). */
  readonly end: RunEnd
  /** PostgreSQL refused the run's own end: it was stored failed without its output. */
  readonly refused: boolean
  readonly batch: BatchResult
}

/** A run waiting to settle. */
export interface SettlementTicket {
  /** Completes once the run's settlement has committed (never fails: it is retried until it commits). */
  readonly committed: Effect.Effect<Settled>
  /**
   * Replaces the run's end with `fallback` if no settlement of it is being attempted now, and says so; false when an
   * attempt is under way (which may still store the original end: wait for `committed`).
   */
  readonly yieldTo: (fallback: RunEnd) => boolean
}

interface Item {
  input: SettlementInput
  state: "queued" | "waiting" | "attempting" | "done"
  attempts: number
  /** The part of a refused batch the run was split into (settled apart from every other run), or null. */
  part: object | null
  degraded: boolean
  readonly completion: Completion<Settled, never>
}

/** The most a backoff waits between attempts while the database is unreachable. */
export const MaxRetryDelayMs = 2_000

/** A run refused alone for its data: stored failed, without its output and its upstream request ids. */
const degrade = (end: RunEnd): RunEnd => ({
  state: end.calls.some((call) => call.status === "succeeded") ? "failed" : "pending",
  output: null,
  outputDigest: null,
  errorCode: "internal_error",
  errorMessage: "the run's outcome could not be stored",
  calls: end.calls.map((call) => ({ ...call, providerRequestId: null }))
})

const NoLabels = labels({})
const Degraded = labels({ result: "degraded" })
const Unsettled = labels({ result: "unsettled" })

class Queue implements SettlementQueue {
  private readonly items: Array<Item> = []
  /** Batches being attempted, by group ("" for all when batches are not grouped). */
  private readonly running = new Map<string, number>()
  private unfinished = 0
  /** Called once `waiting` is next 0. */
  private idleListeners: Array<() => void> = []

  constructor(
    private readonly pool: pg.Pool,
    private readonly options: BatchOptions<SettlementInput>,
    private readonly fork: ReturnType<typeof Effect.runForkWith<never>>,
    private readonly settle: SettleBatch
  ) {}

  submit(input: SettlementInput): SettlementTicket {
    const item: Item = {
      input,
      state: "queued",
      attempts: 0,
      part: null,
      degraded: false,
      completion: makeCompletion<Settled, never>()
    }
    this.items.push(item)
    this.unfinished++
    this.kick(this.groupOf(item))
    return {
      committed: item.completion.wait,
      yieldTo: (fallback) => {
        if (item.state === "attempting" || item.state === "done") return false
        item.input = { ...item.input, end: fallback }
        return true
      }
    }
  }

  private finish(item: Item, stored: boolean, batch: BatchResult): void {
    item.state = "done"
    this.unfinished--
    if (stored) countSettledRun(item.input.end.state, item.input.end.calls)
    item.completion.complete(Exit.succeed({ stored, end: item.input.end, refused: item.degraded, batch }))
    if (this.unfinished === 0 && this.idleListeners.length > 0) {
      const listeners = this.idleListeners
      this.idleListeners = []
      for (const listener of listeners) listener()
    }
  }

  readonly waiting = () => this.unfinished

  readonly idle = Effect.callback<void>((resume) => {
    if (this.unfinished === 0) resume(Effect.void)
    else this.idleListeners.push(() => resume(Effect.void))
  })

  private retryLater(item: Item): void {
    item.state = "waiting"
    item.attempts += 1
    const delay = Math.min(MaxRetryDelayMs, 100 * 2 ** Math.min(item.attempts, 10))
    setTimeout(() => {
      item.state = "queued"
      this.items.push(item)
      this.kick(this.groupOf(item))
    }, delay).unref?.()
  }

  /** A batch that failed: retried later when the database was away, else split, else its run degraded. */
  private failed(batch: ReadonlyArray<Item>, error: SqlError): Effect.Effect<void> {
    if (!isDataError(error)) {
      return Effect.andThen(
        Effect.logWarning(`settlement of ${batch.length} runs failed; retrying`, error.message),
        Effect.sync(() => {
          count(ledgerSettlementRetries, NoLabels)
          batch.forEach((item) => this.retryLater(item))
        })
      )
    }
    if (batch.length > 1) {
      return Effect.sync(() => {
        const half = Math.ceil(batch.length / 2)
        const parts = [{}, {}]
        batch.forEach((item, index) => {
          item.part = parts[index < half ? 0 : 1]!
          item.state = "queued"
        })
        this.items.unshift(...batch)
      })
    }
    const item = batch[0]!
    return Effect.andThen(
      Effect.logError(`PostgreSQL refused the settlement of run ${item.input.id}`, error.reason.cause),
      Effect.sync(() => {
        if (item.degraded) {
          count(ledgerRefusedSettlements, Unsettled)
          this.finish(item, false, { settled: new Set(), leases: [], accounts: [], settledAt: new Date() })
          return
        }
        count(ledgerRefusedSettlements, Degraded)
        item.degraded = true
        item.part = {}
        item.input = { ...item.input, end: degrade(item.input.end) }
        item.state = "queued"
        this.items.unshift(item)
      })
    )
  }

  private groupOf(item: Item): string {
    return this.options.groupOf === undefined ? "" : this.options.groupOf(item.input)
  }

  /**
   * The group's next batch: its runs at the front of the queue of one part of a refused batch, or else of none (other
   * groups' runs between them are left for their own batches).
   */
  private take(group: string): Array<Item> {
    const batch: Array<Item> = []
    let part: object | null | undefined
    for (let index = 0; index < this.items.length && batch.length < this.options.maxBatch;) {
      const item = this.items[index]!
      if (this.groupOf(item) !== group) {
        index++
        continue
      }
      if (part === undefined) part = item.part
      else if (item.part !== part) break
      batch.push(item)
      this.items.splice(index, 1)
    }
    return batch
  }

  private readonly drain = (group: string): Effect.Effect<void> => Effect.suspend(() => {
    const batch = this.take(group)
    if (batch.length === 0) {
      const left = this.running.get(group)! - 1
      if (left === 0) this.running.delete(group)
      else this.running.set(group, left)
      return Effect.void
    }
    for (const item of batch) item.state = "attempting"
    return this.settle(this.pool, batch.map((item) => item.input)).pipe(
      Effect.matchEffect({
        onFailure: (error) => this.failed(batch, error),
        onSuccess: (result) =>
          Effect.sync(() => {
            for (const item of batch) this.finish(item, result.settled.has(item.input.id), result)
          })
      }),
      Effect.andThen(this.drain(group))
    )
  })

  /** Starts batches of the group of a run just queued, up to `maxInFlight` of them. */
  private kick(group: string): void {
    for (let running = this.running.get(group) ?? 0; running < this.options.maxInFlight; running++) {
      this.running.set(group, running + 1)
      this.fork(this.drain(group))
    }
  }
}

export interface SettlementQueue {
  readonly submit: (input: SettlementInput) => SettlementTicket
  /** Runs submitted and not settled yet: queued, being attempted or waiting to be retried. */
  readonly waiting: () => number
  /** Completes once no run is waiting to settle (at once when none is). */
  readonly idle: Effect.Effect<void>
}

/** A settlement queue over `pool` (whose commits are synchronous); its batches run in fibers with `services`. */
export const makeSettlementQueue = (
  pool: pg.Pool,
  options: BatchOptions<SettlementInput>,
  services: Context.Context<never>,
  settle: SettleBatch
): SettlementQueue => new Queue(pool, options, Effect.runForkWith(services), settle)
