/**
 * The `router_selections` table (only this module writes it): the outcome of each classified select request, keyed
 * by its classification run. A row is written once; a second writer of the same run (a concurrent replay that
 * rebuilt the same outcome) keeps the first, and both answer with what is stored.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { DatabaseUnavailable } from "../../schema/Errors.js"
import { SelectResponse } from "../../schema/RouterResponses.js"
import { orUnavailable } from "../db/Unavailable.js"
import type { SelectionOutcome } from "./Selection.js"

const StoredRefusal = Schema.Struct({ message: Schema.String })

interface StoredRow {
  readonly outcome: "selected" | "no_eligible_model"
  readonly body: unknown
}

const decodeSelection = Schema.decodeUnknownEffect(SelectResponse)
const decodeRefusal = Schema.decodeUnknownEffect(StoredRefusal)

// A row that does not decode was not written by this module: a programming error, not a client's.
const toOutcome = (row: StoredRow): Effect.Effect<SelectionOutcome> =>
  row.outcome === "selected"
    ? Effect.orDie(Effect.map(decodeSelection(row.body), (selection) => ({ _tag: "Selected", selection }) as const))
    : Effect.orDie(Effect.map(decodeRefusal(row.body), ({ message }) => ({ _tag: "NoEligibleModel", message }) as const))

/** The repository's operations. */
export interface RouterRepoService {
  /** The stored outcome of an organization's classification run, if any. */
  readonly find: (organizationId: string, runUuid: string) => Effect.Effect<Option.Option<SelectionOutcome>, DatabaseUnavailable>
  /** Stores an outcome unless one is already stored for the run; answers with the stored one. */
  readonly store: (
    organizationId: string,
    runUuid: string,
    outcome: SelectionOutcome
  ) => Effect.Effect<SelectionOutcome, DatabaseUnavailable>
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const find = (organizationId: string, runUuid: string) =>
    Effect.flatMap(
      sql<StoredRow>`SELECT outcome, body FROM router_selections
        WHERE run_id = ${runUuid}::uuid AND organization_id = ${organizationId}`,
      (rows) => rows[0] === undefined ? Effect.succeedNone : Effect.asSome(toOutcome(rows[0]))
    )

  return RouterRepo.of({
    find: (organizationId, runUuid) => orUnavailable(find(organizationId, runUuid)),
    store: (organizationId, runUuid, outcome) =>
      orUnavailable(Effect.gen(function*() {
        const [kind, body] = outcome._tag === "Selected"
          ? ["selected", outcome.selection] as const
          : ["no_eligible_model", { message: outcome.message }] as const
        const inserted = yield* sql`INSERT INTO router_selections (run_id, organization_id, outcome, body)
          VALUES (${runUuid}::uuid, ${organizationId}, ${kind}, ${JSON.stringify(body)}::json)
          ON CONFLICT (run_id) DO NOTHING RETURNING run_id`
        if (inserted.length > 0) return outcome
        const stored = yield* find(organizationId, runUuid)
        return Option.getOrElse(stored, () => outcome)
      }))
  })
})

/** Storage of router selections. */
export class RouterRepo extends Context.Service<RouterRepo, RouterRepoService>()("RouterRepo") {
  /** The repository over the SQL client. */
  static readonly layer = Layer.effect(RouterRepo, make)
}
