/**
 * `last_used_at`, off the request's critical path: a use is noted in memory and written by a background flush every
 * second, so a key's first use shows within 2 seconds; afterwards a key is written at most once a minute (the SQL
 * also refuses to move the value more often, across processes, and leaves a revoked key as it was revoked). Before a
 * key is revoked, its pending use is written (`flushKey`, which also waits for a write under way), so the revoked
 * key's representation is final and an idempotent revocation returns it unchanged.
 */
import { Context, Duration, Effect, Layer, Schedule, Semaphore } from "effect"
import { KeyCredentials, type KeyUse } from "./KeyCredentials.js"

const RefreshMs = 60_000

/** The recorder's operations. */
export interface LastUsedService {
  /** Notes that a key was used now. */
  readonly record: (keyId: string) => void
  /** Writes what is pending now (tests and shutdown). */
  readonly flush: Effect.Effect<void>
  /** Writes one key's pending use now, after any write under way. */
  readonly flushKey: (keyId: string) => Effect.Effect<void>
}

const make = Effect.gen(function*() {
  const keys = yield* KeyCredentials
  const written = new Map<string, number>()
  let pending = new Map<string, Date>()

  // One write at a time, so waiting for the lock also waits for a write under way.
  const lock = yield* Semaphore.make(1)

  const write = (uses: ReadonlyArray<KeyUse>) =>
    keys.recordUses(uses).pipe(
      Effect.tap(() => Effect.sync(() => uses.forEach((use) => written.set(use.keyId, use.at.getTime())))),
      Effect.catch((error) => Effect.logWarning("could not record key use", error))
    )

  const flush = lock.withPermits(1)(Effect.suspend(() => {
    if (pending.size === 0) return Effect.void
    const batch = pending
    pending = new Map()
    return write([...batch].map(([keyId, at]) => ({ keyId, at })))
  }))

  const flushKey = (keyId: string) =>
    lock.withPermits(1)(Effect.suspend(() => {
      const at = pending.get(keyId)
      if (at === undefined) return Effect.void
      pending.delete(keyId)
      return write([{ keyId, at }])
    }))

  yield* Effect.addFinalizer(() => flush)
  yield* flush.pipe(Effect.repeat(Schedule.spaced(Duration.seconds(1))), Effect.forkScoped)

  return LastUsed.of({
    record: (keyId) => {
      const now = Date.now()
      const last = written.get(keyId)
      if ((last === undefined || now - last >= RefreshMs) && !pending.has(keyId)) pending.set(keyId, new Date(now))
    },
    flush,
    flushKey
  })
})

/** Batched `last_used_at` writes. */
export class LastUsed extends Context.Service<LastUsed, LastUsedService>()("LastUsed") {
  /** The recorder with its background flush. */
  static readonly layer = Layer.effect(LastUsed, make)
}
