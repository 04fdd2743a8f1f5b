/**
 * Reads of the `runs` table for the runs routes (the ledger, src/ledger/, is what writes it). The run list reads the
 * organization's runs newest first by `(created_at, id)` through runs_usage backwards (migration 0006), from an
 * offset or from just after a cursor's position (a keyset: `(created_at, id) < (at, id)`, an index range, so a page
 * costs the same however deep it is and runs inserted meanwhile never shift it).
 */
import { SqlClient } from "effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import type { DatabaseUnavailable } from "../../schema/Errors.js"
import { orUnavailable } from "../db/Unavailable.js"
import { runColumns, type RunRow } from "../ledger/RunRecord.js"
import { type Keyset, keysetAtSql, type RunListEntry } from "./RunView.js"

/** Where a page of the run list starts: after skipping `offset` runs, or just after the run a cursor names. */
export type RunListStart =
  | { readonly _tag: "Offset"; readonly offset: number }
  | { readonly _tag: "After"; readonly key: Keyset }

export interface RunsRepoService {
  readonly get: (organizationId: string, id: string) => Effect.Effect<Option.Option<RunRow>, DatabaseUnavailable>
  /** Up to `limit` of an organization's runs, newest first, from `start`, each with its position. */
  readonly page: (
    organizationId: string,
    limit: number,
    start: RunListStart
  ) => Effect.Effect<ReadonlyArray<RunListEntry>, DatabaseUnavailable>
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const cols = sql.literal(runColumns)
  return RunsRepo.of({
    get: (organizationId, id) =>
      orUnavailable(
        Effect.map(
          sql<RunRow>`SELECT ${cols} FROM runs WHERE organization_id = ${organizationId} AND id = ${id}::uuid`,
          (rows) => Option.fromNullishOr(rows[0])
        )
      ),
    page: (organizationId, limit, start) =>
      orUnavailable(
        sql<RunListEntry>`
          SELECT id::text, kind, state, input_digest, output_digest, ${sql.literal(keysetAtSql)} AS keyset_at FROM runs
          WHERE organization_id = ${organizationId}
          ${
          start._tag === "After"
            ? sql`AND (created_at, id) < (${start.key.at}::timestamptz, ${start.key.id}::uuid)`
            : sql``
        }
          ORDER BY runs.created_at DESC, runs.id DESC
          LIMIT ${limit} OFFSET ${start._tag === "Offset" ? start.offset : 0}`
      )
  })
})

/** Reads of stored runs (the ledger writes them). */
export class RunsRepo extends Context.Service<RunsRepo, RunsRepoService>()("RunsRepo") {
  static readonly layer = Layer.effect(RunsRepo, make)
}
