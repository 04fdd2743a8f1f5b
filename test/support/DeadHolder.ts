/**
 * A process that died, for the sweeper's tests: runs admitted by this (live) test server are handed to a holder whose
 * heartbeat stopped a while ago, as if another process had admitted them and been killed; `untilSteady` waits until
 * this process may take silent holders for dead (a whole lease TTL of its own heartbeats).
 */
import { Effect, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { LedgerHolder } from "../../src/ledger/Holder.js"

/** Hands runs to a new holder whose heartbeat stopped an hour ago; returns its id. */
export const handToDeadHolder = (runIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const holder = `h_dead_${randomBytes(8).toString("hex")}`
    yield* sql`INSERT INTO ledger_holders (id, heartbeat_at) VALUES (${holder}, now() - interval '1 hour')`
    yield* sql`UPDATE runs SET holder = ${holder} WHERE id = ANY(${runIds}::uuid[])`
    return holder
  })

/** Waits until this process may take silent holders for dead. */
export const untilSteady = Effect.flatMap(LedgerHolder, (holder) =>
  Effect.retry(
    Effect.filterOrFail(Effect.sync(() => holder.steady()), (steady) => steady),
    Schedule.spaced("100 millis").pipe(Schedule.upTo({ duration: "60 seconds" }))
  ).pipe(Effect.orDie))
