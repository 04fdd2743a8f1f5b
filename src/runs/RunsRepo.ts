/**
 * Reads of the `runs` table for the runs routes (the ledger, src/ledger/, is what writes it).
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import { orUnavailable } from "../db/Unavailable.js"
import { runColumns, type RunRow } from "../ledger/RunRecord.js"

export type { LedgerCall, RunOrigin, RunRow } from "../ledger/RunRecord.js"

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const cols = sql.literal(runColumns)
  return {
    /** One run of an organization. */
    get: (organizationId: string, id: string) =>
      orUnavailable(
        Effect.map(
          sql<RunRow>`SELECT ${cols} FROM runs WHERE organization_id = ${organizationId} AND id = ${id}::uuid`,
          (rows) => Option.fromNullable(rows[0])
        )
      ),
    /** A page of an organization's runs, newest first. */
    list: (organizationId: string, limit: number, offset: number) =>
      orUnavailable(
        sql<Pick<RunRow, "id" | "kind" | "state" | "input_digest" | "output_digest">>`
          SELECT id::text, kind, state, input_digest, output_digest FROM runs
          WHERE organization_id = ${organizationId}
          ORDER BY runs.created_at DESC, runs.id DESC LIMIT ${limit} OFFSET ${offset}`
      )
  }
})

/** Storage of runs and their ledger entries. */
export class RunsRepo extends Context.Tag("RunsRepo")<RunsRepo, Effect.Effect.Success<typeof make>>() {
  /** The repository over the SQL client. */
  static readonly layer = Layer.effect(RunsRepo, make)
}
