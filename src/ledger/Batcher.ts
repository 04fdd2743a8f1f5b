/**
 * Group commit. Admission and settlement are one short transaction each, and a transaction's fixed costs (a round
 * trip, a commit and its WAL flush, the statement's own overhead) dwarf the work of one run. The batcher keeps at
 * most `maxInFlight` transactions running and gathers the requests that arrive meanwhile, from any organization,
 * into the next one: at one request in flight a request waits for nothing, and under load a run pays a share of a
 * transaction instead of a whole one. Each request still gets its own outcome; a batch that fails fails each of its
 * requests. With `groupOf` (`LEDGER_BATCHES=organization`) each group, an organization, has batches of its own, with
 * `maxInFlight` for each group: no transaction holds two organizations' requests (docs/scaling.md).
 */
import { Effect, Exit } from "effect"
import { AppConfig } from "../config/AppConfig.js"
import { type Completion, makeCompletion } from "./Completion.js"

interface Pending<I, O, E> {
  readonly item: I
  readonly completion: Completion<O, E>
}

/**
 * How admission's and settlement's batches go to PostgreSQL: up to 128 runs each, one transaction in flight at a time
 * per batcher. With one in flight, the runs arriving while a transaction runs all join the next one, so a busy
 * process sends fewer, fuller batches: PostgreSQL pays a statement's fixed cost (binding, planning, executor start,
 * commit) and each side pays a wake-up once per batch, not once per two or three runs; one run in flight is a batch
 * of one either way. docs/ledger.md, "Batches: one transaction in flight", has the measurements.
 */
export const LedgerBatches = { maxBatch: 128, maxInFlight: 1 } as const

/** Batch limits, and the group of a request when batches hold one group's requests only. */
export interface BatchOptions<I> {
  readonly maxBatch: number
  readonly maxInFlight: number
  readonly groupOf?: ((item: I) => string) | undefined
}

/**
 * `LedgerBatches` for requests of the organizations `organizationOf` names: with `LEDGER_BATCHES=organization` (a
 * distributed PostgreSQL that routes each transaction by organization) a batch holds one organization's requests.
 */
export const ledgerBatchesOf = <I>(organizationOf: (item: I) => string): Effect.Effect<BatchOptions<I>, never, AppConfig> =>
  Effect.map(AppConfig, (config) =>
    ({ ...LedgerBatches, groupOf: config.ledgerBatches === "organization" ? organizationOf : undefined }))

export interface Batcher<I, O, E> {
  /** Queues an item; completes with its outcome once its batch has ended. */
  readonly submit: (item: I) => Effect.Effect<O, E>
}

/**
 * A batcher that runs `process(items)` for each batch; `process` returns one exit per item, in order, or fails as a
 * whole.
 */
export const makeBatcher = <I, O, E, E2, R>(
  process: (items: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<Exit.Exit<O, E>>, E2, R>,
  options: BatchOptions<I>
): Effect.Effect<Batcher<I, O, E | E2>, never, R> =>
  Effect.map(Effect.context<R>(), (services) => {
    // The queue and running batches of each group (one group, "", without `groupOf`); a group's entry goes once it
    // has neither.
    const groups = new Map<string, { readonly queue: Array<Pending<I, O, E | E2>>; running: number }>()
    // Batches run in fibers of their own, from the context the batcher was made in (its services, its loggers).
    const fork = Effect.runForkWith(services)

    const settle = (batch: ReadonlyArray<Pending<I, O, E | E2>>, exit: Exit.Exit<ReadonlyArray<Exit.Exit<O, E>>, E2>) =>
      Effect.sync(() => {
        for (let index = 0; index < batch.length; index++) {
          batch[index]!.completion.complete(Exit.isSuccess(exit) ? exit.value[index]! : (exit as Exit.Exit<never, E2>))
        }
      })

    const drain = (key: string, group: { readonly queue: Array<Pending<I, O, E | E2>>; running: number }): Effect.Effect<void, never, R> =>
      Effect.suspend(() => {
        if (group.queue.length === 0) {
          if (--group.running === 0) groups.delete(key)
          return Effect.void
        }
        const batch = group.queue.splice(0, options.maxBatch)
        return process(batch.map((pending) => pending.item)).pipe(
          Effect.exit,
          Effect.flatMap((exit) => settle(batch, exit)),
          Effect.andThen(drain(key, group))
        )
      })

    /** Queues an item and starts a batch of its group when fewer than `maxInFlight` of the group's run. */
    const enqueue = (item: I): Completion<O, E | E2> => {
      const completion = makeCompletion<O, E | E2>()
      const key = options.groupOf === undefined ? "" : options.groupOf(item)
      let group = groups.get(key)
      if (group === undefined) {
        group = { queue: [], running: 0 }
        groups.set(key, group)
      }
      group.queue.push({ item, completion })
      if (group.running < options.maxInFlight) {
        group.running++
        // The batch starts at once, in a fiber of its own: the first request of an idle batcher waits for nothing.
        fork(drain(key, group))
      }
      return completion
    }

    return { submit: (item) => Effect.suspend(() => enqueue(item).wait) }
  })
