/**
 * A process that died, for the sweeper's tests: runs admitted by this (live) test server are handed to a holder whose
 * heartbeat stopped a while ago, as if another process had admitted them and been killed; `untilSteady` waits until
 * this process may take silent holders for dead (a whole lease TTL of its own heartbeats).
 */
import { type Duration, Effect, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { LedgerHolder } from "../../src/ledger/Holder.js"
import { sweepOnce } from "../../src/ledger/Sweeper.js"

/** Hands runs to a new holder whose heartbeat stopped an hour ago; returns its id. */
export const handToDeadHolder = (runIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const holder = `h_dead_${randomBytes(8).toString("hex")}`
    // One transaction: the server's own sweeper must never see the dead holder without its runs, or it forgets the
    // holder (it has nothing left) before the runs name it.
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`INSERT INTO ledger_holders (id, heartbeat_at) VALUES (${holder}, now() - interval '1 hour')`
      yield* sql`UPDATE runs SET holder = ${holder} WHERE id = ANY(${runIds}::uuid[])`
    }))
    return holder
  })

/** Waits until this process may take silent holders for dead. */
export const untilSteady = Effect.flatMap(LedgerHolder, (holder) =>
  Effect.retry(
    Effect.filterOrFail(Effect.sync(() => holder.steady()), (steady) => steady),
    Schedule.spaced("100 millis").pipe(Schedule.upTo({ duration: "60 seconds" }))
  ).pipe(Effect.orDie))

/**
 * Sweeps until none of `runIds` holds anything, for at most `within`; fails if one still holds then. The server's own
 * sweeper runs beside the test's sweeps, so a run may be settled by either, and a sweep that meets the other's locks
 * (or read the rows before the test changed them) leaves the run to the next one: what the test asserts is that the
 * run is released, not which sweep released it.
 */
export const sweptUntilReleased = (runIds: ReadonlyArray<string>, within: Duration.Input = "30 seconds") =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const holding = sql<{ n: number }>`SELECT count(*)::int AS n FROM runs WHERE id = ANY(${runIds}::uuid[]) AND held`
    yield* Effect.retry(
      Effect.andThen(sweepOnce, holding).pipe(Effect.filterOrFail((rows) => rows[0]!.n === 0)),
      Schedule.spaced("100 millis").pipe(Schedule.upTo({ duration: within }))
    ).pipe(Effect.orDie)
  })
