/**
 * The runs service: `POST /v1/runs` (the idempotency key's format, the request's own checks and input estimate, then
 * the run executed: RunExecution.ts), the router's classification runs, and the stored runs read back for
 * `GET /v1/runs`, `GET /v1/runs/{run_id}` and its stream.
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import type { ActorShape } from "../../schema/Auth.js"
import {
  type DatabaseUnavailable,
  IdempotencyKeyRequired,
  InvalidIdempotencyKey,
  RunNotFound
} from "../../schema/Errors.js"
import type { RunRequest } from "../../schema/RunsApi.js"
import { AppConfig } from "../config/AppConfig.js"
import { CallRecorder } from "../ledger/CallRecorder.js"
import { RunLedger } from "../ledger/RunLedger.js"
import type { RunOrigin } from "../ledger/RunRecord.js"
import { ModelProvider } from "../providers/ModelProvider.js"
import {
  executeRun,
  runContext,
  type RunOutcome,
  type RunRequestShape,
  type RunServices,
  type RunTiming,
  type WorkError
} from "./RunExecution.js"
import { type RunSpec, type RunSpecError, compileRunSpec } from "./RunSpec.js"
import { type RunListStart, RunsRepo } from "./RunsRepo.js"
import { clampRunListLimit, parseRunId, type RunListPageView, runListPageView, runView, type RunView } from "./RunView.js"

export type { RunOutcome, RunTiming } from "./RunExecution.js"

const VisibleAscii = /^[\x21-\x7e]{1,255}$/

/** The idempotency key of a request, or why it is not acceptable (spec: 1 to 255 bytes of visible ASCII). */
export const checkIdempotencyKey = (header: string | undefined): Result.Result<string, IdempotencyKeyRequired | InvalidIdempotencyKey> =>
  header === undefined
    ? Result.fail(new IdempotencyKeyRequired({ message: "send an Idempotency-Key header (1 to 255 visible ASCII characters)" }))
    : VisibleAscii.test(header)
    ? Result.succeed(header)
    : Result.fail(new InvalidIdempotencyKey({
      message: "Idempotency-Key must be 1 to 255 bytes of visible ASCII (0x21 to 0x7E)"
    }))

export interface RunsService {
  /** Runs a request from `POST /v1/runs`. */
  readonly create: (
    actor: ActorShape,
    request: RunRequest,
    idempotencyKeyHeader: string | undefined,
    timing: RunTiming
  ) => Effect.Effect<RunOutcome, RunSpecError | WorkError | IdempotencyKeyRequired | InvalidIdempotencyKey>
  /** Runs an already compiled spec for a caller (the router's classification: a run of the calling key). */
  readonly execute: (
    actor: ActorShape,
    origin: RunOrigin,
    idempotencyKey: string,
    spec: RunSpec,
    timing: RunTiming
  ) => Effect.Effect<RunOutcome, WorkError>
  /** One stored run of an organization (either id spelling). */
  readonly get: (organizationId: string, id: string) => Effect.Effect<RunView, RunNotFound | DatabaseUnavailable>
  /** A page of the organization's runs, newest first, from `start`; `limit` clamped to 1-100 (default 20). */
  readonly list: (
    organizationId: string,
    limit: number | undefined,
    start: RunListStart
  ) => Effect.Effect<RunListPageView, DatabaseUnavailable>
  /** The wire view of an outcome. */
  readonly view: (outcome: RunOutcome) => RunView
}

/** A run of a caller: its organization, and its API key (null for a console session), whose limits apply. */
const requestOf = (actor: ActorShape, origin: RunOrigin, idempotencyKey: string, spec: RunSpec): RunRequestShape => ({
  organizationId: actor.organizationId,
  keyId: actor.credential.kind === "api_key" ? actor.credential.keyId : null,
  origin,
  idempotencyKey,
  spec
})

const make = Effect.gen(function*() {
  const config = yield* AppConfig
  const repo = yield* RunsRepo
  const services: RunServices = {
    ledger: yield* RunLedger,
    recorder: yield* CallRecorder,
    provider: yield* ModelProvider,
    modelId: config.decisionModelId,
    pricePerMtokMicros: config.decisionPricePerMtokMicros
  }
  const names = { id: config.decisionModelId, alias: config.decisionModelAlias }

  /** The run a `POST /v1/runs` asks for, once its idempotency key and its request passed their own checks. */
  const runOf = (actor: ActorShape, request: RunRequest, idempotencyKeyHeader: string | undefined) =>
    Result.flatMap(checkIdempotencyKey(idempotencyKeyHeader), (idempotencyKey) =>
      Result.map(compileRunSpec(request, names), (spec) => requestOf(actor, "runs", idempotencyKey, spec)))

  return Runs.of({
    create: (actor, request, idempotencyKeyHeader, timing) =>
      Effect.flatMap(Effect.fromResult(runOf(actor, request, idempotencyKeyHeader)), (run) =>
        executeRun(services, runContext(run, timing))),
    execute: (actor, origin, idempotencyKey, spec, timing) =>
      executeRun(services, runContext(requestOf(actor, origin, idempotencyKey, spec), timing)),
    get: (organizationId, id) =>
      Effect.gen(function*() {
        const uuid = parseRunId(id)
        const notFound = new RunNotFound({ message: `no run ${id} in this organization` })
        if (Option.isNone(uuid)) return yield* notFound
        const row = yield* repo.get(organizationId, uuid.value)
        if (Option.isNone(row)) return yield* notFound
        return runView(row.value, true)
      }),
    list: (organizationId, limit, start) => {
      const clamped = clampRunListLimit(limit)
      return Effect.map(
        repo.page(organizationId, clamped + 1, start),
        (rows) => runListPageView(organizationId, clamped, start._tag === "Offset" ? start.offset : 0, rows)
      )
    },
    view: (outcome) => runView(outcome.row, outcome.replayed)
  })
})

export class Runs extends Context.Service<Runs, RunsService>()("Runs") {
  /**
   * Runs over the quota ledger and the credit store (through the run ledger built on them: RunLedger.ts), the model
   * provider and the runs table. The run ledger and the call recorder are provided here, so what the service needs
   * names the quota ledger and the credit store themselves; layers are shared by reference, so the ledger provided
   * here is the one every other user of `RunLedger` in the process sees (Services.ts).
   */
  static readonly layer = Layer.effect(Runs, make).pipe(Layer.provide(Layer.mergeAll(RunLedger.layer, CallRecorder.layer)))
}
