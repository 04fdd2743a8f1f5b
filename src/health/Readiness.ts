/**
 * Readiness: the process is not stopping (Lifecycle.ts), the database answers and every migration shipped with this
 * build is applied. Each check asks the database again, so a schema migrated while the service runs
 * (`MIGRATIONS=off`, `arbiter migrate`) makes it ready without a restart. Bounded in time, so a database that hangs
 * makes the service unready rather than making `/readyz` hang. A stopping process answers unready with the database's
 * checks as they are: a 503 whose checks are `ok` and `applied` is an instance draining (docs/operations.md).
 */
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { appliedVersion, readMigrations } from "../db/Migrations.js"
import { Lifecycle } from "./Lifecycle.js"

/** The outcome of one readiness check. */
export interface ReadinessReport {
  readonly ready: boolean
  readonly checks: { readonly database: "ok" | "unavailable"; readonly migrations: "applied" | "pending" | "unknown" }
}

/** Checks whether the service can serve. */
export class Readiness extends Context.Service<Readiness, { readonly check: Effect.Effect<ReadinessReport> }>()("Readiness") {
  /** Readiness against the SQL client, expecting the newest migration file shipped with this build. */
  static readonly layer = Layer.effect(
    Readiness,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const lifecycle = yield* Lifecycle
      const expected = readMigrations().reduce((max, file) => Math.max(max, file.id), 0)
      return {
        check: appliedVersion.pipe(
          Effect.provideService(SqlClient.SqlClient, sql),
          Effect.timeout("2 seconds"),
          Effect.map((version): ReadinessReport => {
            const migrations = version >= expected ? "applied" : "pending"
            return { ready: migrations === "applied" && !lifecycle.stopping(), checks: { database: "ok", migrations } }
          }),
          Effect.orElseSucceed((): ReadinessReport => ({
            ready: false,
            checks: { database: "unavailable", migrations: "unknown" }
          }))
        )
      }
    })
  )
}
