/**
 * The database the service runs on: PostgreSQL when `DATABASE_URL` is set, else the embedded PGlite in `DATA_DIR`,
 * both reached through the same `pg` client and the same SQL. `DatabaseLive` also applies the migrations, so the
 * layer is ready to serve once built (build it before the HTTP server listens; see Server.ts).
 */
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../config/AppConfig.js"
import { findOwner, openEmbedded, ownerTarget } from "./Embedded.js"
import { migrate } from "./Migrations.js"
import { pgClientLayer } from "./PgPool.js"

/** Which kind of database is in use. */
export class DatabaseKind extends Context.Service<DatabaseKind, "postgres" | "embedded">()("DatabaseKind") {}

/** The SQL client for the configured database, opening the embedded one when no URL is set. */
export const SqlLive = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (Option.isSome(config.databaseUrl)) {
      return Layer.merge(
        pgClientLayer({ url: Redacted.value(config.databaseUrl.value) }, { max: config.databasePoolSize, pooler: config.databasePooler }),
        Layer.succeed(DatabaseKind, "postgres")
      )
    }
    const target = yield* openEmbedded(config.dataDir)
    return Layer.merge(pgClientLayer(target, { max: 4 }), Layer.succeed(DatabaseKind, "embedded"))
  })
)

/** The SQL client for tools (the CLI): like SqlLive, but goes through a running server that owns embedded files. */
export const SqlForTools = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (Option.isNone(config.databaseUrl)) {
      const owner = yield* findOwner(config.dataDir)
      if (owner !== undefined) {
        return Layer.merge(pgClientLayer(ownerTarget(owner), { max: 1 }), Layer.succeed(DatabaseKind, "embedded"))
      }
    }
    return SqlLive
  })
)

/** Applies pending migrations, taking turns with other processes on PostgreSQL (Migrations.ts). */
export const migrateDatabase = Effect.flatMap(Effect.service(DatabaseKind), (kind) => migrate(undefined, { takeTurns: kind === "postgres" }))

/** Applies pending migrations once the client is up. */
export const MigrateOnStart = Layer.effectDiscard(
  migrateDatabase.pipe(Effect.tap((applied) => applied.length > 0 ? Effect.logInfo(`applied ${applied.length} migrations`) : Effect.void))
)

/** The database, migrated. */
export const DatabaseLive = MigrateOnStart.pipe(Layer.provideMerge(SqlLive))
