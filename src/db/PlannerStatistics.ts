/**
 * Keeps the planner's statistics of the service's tables as current as autovacuum would, where autovacuum does not
 * run: the embedded database (single-user PGlite has no autovacuum launcher, and counts no changes) and a PostgreSQL
 * server with `autovacuum = off`.
 *
 * Why it matters: a table never analyzed is planned from guesses, and for the hot lookups the guesses tie. On a fresh
 * database the idempotency lookup of every admission (`runs` by organization, origin and key) was planned on
 * `runs_usage` (organization, created_at) instead of the unique `runs_idempotency`, then kept as the connection's
 * cached plan: each admission read all of its organization's runs. With one organization, PostgreSQL's CPU per run
 * went from 2 ms to 8.6 ms in 40 s of load (and to 0.4 ms at once after an `ANALYZE`; docs/ledger.md).
 *
 * The rule is size-based, so it works where the server counts no changes: a table whose heap has grown by a fifth
 * (and at least two pages) since its last analyze is analyzed again (`pg_class.relpages` is what the last
 * `ANALYZE` or `VACUUM` saw). Where autovacuum runs, it analyzes after a tenth of the rows changed, before this rule
 * fires, except in a table's first minute. One process at a time analyzes (a transaction-scoped advisory lock), and
 * a round that finds nothing stale costs one catalog query.
 */
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { Effect, Layer, Schedule } from "effect"

/** The advisory lock one analyzing process holds for its transaction ("ArSt"). */
export const StatisticsLock = 0x41725374

/** How often the tables' sizes are compared with their statistics. */
export const StatisticsCheckMillis = 5_000

const staleTables = `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = current_schema() AND c.relkind = 'r'
    AND pg_relation_size(c.oid) / current_setting('block_size')::int >= GREATEST(c.relpages * 1.2, c.relpages + 2)
  ORDER BY c.relname`

/** A table name as an SQL identifier. */
const identifier = (name: string) => `"${name.replaceAll("\"", "\"\"")}"`

/**
 * Analyzes the service's tables that have outgrown their statistics, once; returns the names analyzed (none when
 * another process holds the lock). A round that finds none stale opens no transaction; one that does looks them up
 * again once it holds the lock: another process may have just analyzed them (its lock ends with its transaction), and
 * a second `ANALYZE` of the same tables would be waste.
 */
export const refreshStatistics: Effect.Effect<ReadonlyArray<string>, SqlError, SqlClient.SqlClient> = Effect.gen(
  function*() {
    const sql = yield* SqlClient.SqlClient
    const stale = () => Effect.map(sql.unsafe<{ name: string }>(staleTables), (rows) => rows.map((row) => row.name))
    if ((yield* stale()).length === 0) return []
    return yield* sql.withTransaction(Effect.gen(function*() {
      const [lock] = yield* sql.unsafe<{ locked: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS locked", [StatisticsLock])
      const names = lock?.locked === true ? yield* stale() : []
      if (names.length > 0) yield* sql.unsafe(`ANALYZE ${names.map(identifier).join(", ")}`)
      return names
    }))
  }
)

/** The statistics keeper, every `StatisticsCheckMillis` for the life of the process. */
export const PlannerStatisticsLive = Layer.effectDiscard(
  refreshStatistics.pipe(
    Effect.tap((names) => names.length === 0 ? Effect.void : Effect.logDebug(`analyzed ${names.join(", ")}`)),
    // A database that does not answer is reported by the routes and /readyz; this loop just tries again.
    Effect.catch((error) => Effect.logDebug("could not refresh the planner's statistics", error.message)),
    Effect.repeat(Schedule.spaced(StatisticsCheckMillis)),
    Effect.forkScoped
  )
)
