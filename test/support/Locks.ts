/**
 * Row locks a test holds in a transaction of its own, to keep the service's transactions that need the same row
 * waiting (PostgreSQL only: the embedded database's connections share one session, where a lock holds no one back).
 */
import { Deferred, Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Locks an organization's credit account row (`FOR UPDATE`, as admission's grants, the exact way and settlement's
 * locks take it) and keeps it locked until `release`, which commits the test's transaction.
 */
export const holdAccountLock = (organizationId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const locked = yield* Deferred.make<void>()
    const unlock = yield* Deferred.make<void>()
    const holder = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT 1 FROM credit_accounts WHERE organization_id = ${organizationId} FOR UPDATE`
      yield* Deferred.succeed(locked, undefined)
      yield* Deferred.await(unlock)
    })))
    yield* Deferred.await(locked)
    return { release: Effect.andThen(Deferred.succeed(unlock, undefined), Fiber.join(holder)) }
  })
