/**
 * The Model Router's flow for `POST /v1/router/select`, in this order: the idempotency key's format; the request's
 * own checks (SelectRequest); the filters, so a request they leave empty is refused before anything is charged
 * (Eligibility); the classification as one decision run of origin `router` through `Runs.execute` (admission,
 * quota, credit, model calls, ledger and settlement exactly as `POST /v1/runs`; its `input_digest` is the select
 * body's digest, so the same key with another body is `409 idempotency_conflict`); then the ranking, stored once
 * per run so a replay returns it with `replayed` true and no charge. A replay whose run is still pending, or failed,
 * is `409`. Without a key each request gets a fresh internal one: `auto ` + a random uuid (the space keeps it apart
 * from every client key, which is visible ASCII).
 */
import { Context, Effect, Result, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import type { ActorShape } from "../../schema/Auth.js"
import {
  type DatabaseUnavailable,
  IdempotencyConflict,
  type IdempotencyKeyRequired,
  type InputTooLarge,
  type InvalidIdempotencyKey,
  NoEligibleModel,
  type NoRouteAvailable
} from "../../schema/Errors.js"
import type { SelectRequest } from "../../schema/RouterApi.js"
import type { ModelCatalog, SelectResponse, TaskTypeListing } from "../../schema/RouterResponses.js"
import { AppConfig } from "../config/AppConfig.js"
import { checkIdempotencyKey, Runs, type RunsService, type RunTiming } from "../runs/Runs.js"
import { runId, type RunRow } from "../runs/RunView.js"
import { catalogView, taskTypesView } from "./CatalogView.js"
import { classificationSpec, compileClassification } from "./ClassificationRun.js"
import { checkEligibility } from "./Eligibility.js"
import { RouterData } from "./RouterData.js"
import { RouterRepo } from "./RouterRepo.js"
import { checkSelectRequest, type SelectRequestError } from "./SelectRequest.js"
import { decideSelection, type SelectionOutcome } from "./Selection.js"
import { TaxonomyInvalid } from "./Taxonomy.js"
import { annotateSpan, withTracedSpan } from "../telemetry/Spans.js"

/** Prefix of the internal idempotency key of a request sent without one. */
export const AUTO_KEY_PREFIX = "auto "

const impossible = (error: { readonly message: string }) => Effect.die(new Error(`unexpected: ${error.message}`))

const notReady = (row: RunRow) =>
  new IdempotencyConflict({
    message: row.state === "pending"
      ? `the classification ${runId(row.id)} of this idempotency key is not ready yet; send the request again later`
      : `the classification ${runId(row.id)} of this idempotency key failed (${row.error_code ?? "error"}); ` +
        "send the request with a new idempotency key"
  })

const present = (outcome: SelectionOutcome, replayed: boolean): Effect.Effect<SelectResponse, NoEligibleModel> =>
  outcome._tag === "Selected"
    ? Effect.succeed({ ...outcome.selection, replayed })
    : Effect.fail(new NoEligibleModel({ message: outcome.message }))

/** Why a selection is refused: the request's own checks, its classification run's failures, no eligible model. */
export type SelectError =
  | InvalidIdempotencyKey
  | SelectRequestError
  | NoEligibleModel
  | InputTooLarge
  | IdempotencyConflict
  | DatabaseUnavailable
  | Exclude<Effect.Error<ReturnType<RunsService["execute"]>>, NoRouteAvailable>

/** The Model Router's operations. */
export interface ModelRouterService {
  /** Classifies the task as one billed decision run and ranks the catalog for it; replays a stored selection. */
  readonly select: (
    actor: ActorShape,
    body: SelectRequest,
    idempotencyKeyHeader: string | undefined,
    timing: RunTiming
  ) => Effect.Effect<SelectResponse, SelectError>
  /** The catalog as `GET /v1/router/models` returns it. */
  readonly models: Effect.Effect<typeof ModelCatalog.Type>
  /** The taxonomy as `GET /v1/router/task-types` returns it. */
  readonly taskTypes: Effect.Effect<typeof TaskTypeListing.Type>
}

const make = Effect.gen(function*() {
  const config = yield* AppConfig
  const data = yield* RouterData
  const runs = yield* Runs
  const repo = yield* RouterRepo
  const plans = yield* Effect.fromResult(Result.mapError(compileClassification(data.taxonomy), (problem) =>
    new TaxonomyInvalid({ message: `${config.routerTaskTypesPath}: its classification questions are rejected: ${problem}` })))
  const models = catalogView(data)
  const taskTypes = taskTypesView(data)

  const idempotencyKey = (header: string | undefined): Effect.Effect<string, InvalidIdempotencyKey> => {
    if (header === undefined) return Effect.succeed(`${AUTO_KEY_PREFIX}${randomUUID()}`)
    const checked: Result.Result<string, IdempotencyKeyRequired | InvalidIdempotencyKey> = checkIdempotencyKey(header)
    if (Result.isSuccess(checked)) return Effect.succeed(checked.success)
    return checked.failure._tag === "invalid_idempotency_key" ? Effect.fail(checked.failure) : impossible(checked.failure)
  }

  return ModelRouter.of({
    select: (actor, body, idempotencyKeyHeader, timing) =>
      Effect.gen(function*() {
        const key = yield* idempotencyKey(idempotencyKeyHeader)
        const request = yield* Effect.fromResult(checkSelectRequest(body, data))
        yield* Effect.fromResult(checkEligibility(data, request))
        const spec = yield* Effect.fromResult(classificationSpec(plans, request))
        const { replayed, row } = yield* runs.execute(actor, "router", key, spec, timing).pipe(
          Effect.catchTag("no_route_available", impossible)
        )
        if (row.state !== "completed") return yield* notReady(row)
        const stored = replayed ? yield* repo.find(actor.organizationId, row.id) : Option.none<SelectionOutcome>()
        const outcome = Option.isSome(stored)
          ? stored.value
          : yield* repo.store(
            actor.organizationId,
            row.id,
            decideSelection({ data, request, run: row, decisionModel: config.decisionModelId })
          )
        yield* annotateSpan({ "router.policy": request.policy, "router.replayed": replayed })
        return yield* present(outcome, replayed)
      }).pipe(withTracedSpan("router.select")),
    models: Effect.succeed(models),
    taskTypes: Effect.succeed(taskTypes)
  })
})

/** The Model Router service. */
export class ModelRouter extends Context.Service<ModelRouter, ModelRouterService>()("ModelRouter") {
  /** The router over the loaded data, the runs flow and its selections table. */
  static readonly layer = Layer.effect(ModelRouter, make)
}
