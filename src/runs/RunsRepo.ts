/**
 * Reads of the `runs` table for the runs routes (the ledger, src/ledger/, is what writes it).
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import type { DatabaseUnavailable } from "../../schema/Errors.js"
import { orUnavailable } from "../db/Unavailable.js"
import { runColumns, type RunRow } from "../ledger/RunRecord.js"

/** A run as the run list shows it. */
export type RunListRow = Pick<RunRow, "id" | "kind" | "state" | "input_digest" | "output_digest">

/** The repository's operations. */
export interface RunsRepoService {
  /** One run of an organization. */
  readonly get: (organizationId: string, id: string) => Effect.Effect<Option.Option<RunRow>, DatabaseUnavailable>
  /** A page of an organization's runs, newest first. */
  readonly list: (
    organizationId: string,
    limit: number,
    offset: number
  ) => Effect.Effect<ReadonlyArray<RunListRow>, DatabaseUnavailable>
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const cols = sql.literal(runColumns)
  return RunsRepo.of({
    get: (organizationId, id) =>
      orUnavailable(
        Effect.map(
          sql<RunRow>`SELECT ${cols} FROM runs WHERE organization_id = ${organizationId} AND id = ${id}::uuid`,
          (rows) => Option.fromNullable(rows[0])
        )
      ),
    list: (organizationId, limit, offset) =>
      orUnavailable(
        sql<RunListRow>`
          SELECT id::text, kind, state, input_digest, output_digest FROM runs
          WHERE organization_id = ${organizationId}
          ORDER BY runs.created_at DESC, runs.id DESC LIMIT ${limit} OFFSET ${offset}`
      )
  })
})

/** Reads of stored runs (the ledger writes them). */
export class RunsRepo extends Context.Tag("RunsRepo")<RunsRepo, RunsRepoService>() {
  /** The repository over the SQL client. */
  static readonly layer = Layer.effect(RunsRepo, make)
}
