/**
 * Runs end to end, in the contract's order: idempotency key format, the request's own checks and input estimate
 * (RunSpec), admission (quota, idempotency, credit: one transaction), the model (never inside a transaction, within
 * the deadline), settlement (a second transaction). The run's work continues in its own fiber when the caller goes
 * away or the deadline answers first, so a run is always settled and its holds released.
 */
import { Context, Effect, Either, Exit, Layer, Option, Runtime } from "effect"
import type { ActorShape } from "../../schema/Auth.js"
import {
  DeadlineExceeded,
  IdempotencyKeyRequired,
  InvalidIdempotencyKey,
  NoRouteAvailable,
  RunNotFound
} from "../../schema/Errors.js"
import type { RunRequest } from "../../schema/RunsApi.js"
import { AppConfig } from "../AppConfig.js"
import { ModelProvider } from "../providers/ModelProvider.js"
import { Admission, type AdmissionError, type AdmittedRun } from "./Admission.js"
import { outputDigest } from "./Answers.js"
import { CallRecorder } from "./CallRecorder.js"
import { callOccurred, type EngineError, executeDecisionWith, type IndexedCall } from "./DecisionEngine.js"
import { SPEND_CEILING_MICROS } from "./Pricing.js"
import { type RunSpec, type RunSpecError, compileRunSpec } from "./RunSpec.js"
import { type LedgerCall, type RunOrigin, type RunRow, RunsRepo } from "./RunsRepo.js"
import { parseRunId, runId, runView, type RunView } from "./RunView.js"
import { Settlement, type SettlementResult } from "./Settlement.js"

/** When a request started (epoch ms, for its deadline) and how long its parts took (ms, for `Server-Timing`). */
export interface RunTiming {
  readonly started: number
  admitMs?: number
  upstreamMs?: number
  settleMs?: number
}

/** How a run ended, for the caller. */
export interface RunOutcome {
  readonly row: RunRow
  readonly replayed: boolean
}

/** Anything a run can end with besides a settled run. */
export type RunError = RunSpecError | AdmissionError | EngineError | NoRouteAvailable | DeadlineExceeded

const VisibleAscii = /^[\x21-\x7e]{1,255}$/

/** The idempotency key of a request, or why it is not acceptable (spec: 1 to 255 bytes of visible ASCII). */
export const checkIdempotencyKey = (header: string | undefined) =>
  header === undefined
    ? Either.left(new IdempotencyKeyRequired({ message: "send an Idempotency-Key header (1 to 255 visible ASCII characters)" }))
    : VisibleAscii.test(header)
    ? Either.right(header)
    : Either.left(new InvalidIdempotencyKey({
      message: "Idempotency-Key must be 1 to 255 bytes of visible ASCII (0x21 to 0x7E)"
    }))

/** Answers a caller gets after the deadline passes while the run's work goes on, settling on its own. */
const DeadlineGraceMs = 50

const make = Effect.gen(function*() {
  const config = yield* AppConfig
  const admission = yield* Admission
  const settlement = yield* Settlement
  const repo = yield* RunsRepo
  const provider = yield* ModelProvider
  const recorder = yield* CallRecorder
  const names = { id: config.decisionModelId, alias: config.decisionModelAlias }
  const afterSettlement: Array<(organizationId: string, result: SettlementResult) => Effect.Effect<void>> = []
  const runtime = yield* Effect.runtime<never>()

  /** A run's calls as the ledger records them. */
  const ledgerCalls = (runId: string, calls: ReadonlyArray<IndexedCall>): Array<LedgerCall> =>
    calls.map((call) => ({
      runId,
      callIndex: call.index,
      retryOrdinal: call.retryOrdinal,
      provider: provider.identity.provider,
      modelId: names.id,
      providerRequestId: call.providerRequestId,
      status: call.status,
      inputTokens: call.inputTokens,
      outputTokens: call.outputTokens,
      costMicros: call.costMicros,
      createdAt: call.at
    }))

  const settle = (
    organizationId: string,
    run: AdmittedRun,
    end: { state: RunRow["state"]; output: unknown; error: EngineError | null; calls: ReadonlyArray<IndexedCall> }
  ) => {
    const inputTokens = end.calls.reduce((sum, call) => sum + call.inputTokens, 0)
    const outputTokens = end.calls.reduce((sum, call) => sum + call.outputTokens, 0)
    const costMicros = end.calls.reduce((sum, call) => sum + call.costMicros, 0)
    const stored = end.state === "failed" && end.error !== null ? end.error : null
    const digest = end.output === null ? null : outputDigest(end.output)
    const errorCode = stored === null ? null : stored._tag
    const errorMessage = stored === null ? null : stored.message
    return Effect.tap(
      settlement.settle({
        organizationId,
        id: run.id,
        state: end.state,
        output: end.output,
        outputDigest: digest,
        errorCode,
        errorMessage,
        calls: ledgerCalls(run.id, end.calls)
      }),
      (result) => Effect.forEach(afterSettlement, (hook) => hook(organizationId, result), { discard: true })
    ).pipe(Effect.map((result): Omit<RunRow, "id" | "organization_id" | "origin" | "idempotency_key" | "kind" | "input_digest" | "hold_micros" | "hold_tokens" | "created_at"> => ({
      state: end.state,
      output_digest: digest,
      output: end.output,
      error_code: errorCode,
      error_message: errorMessage,
      input_tokens: inputTokens,
      output_tokens: outputTokens,
      cost_micros: costMicros,
      settled_at: end.state === "pending" ? null : result.settledAt
    })))
  }

  const work = (
    actor: { readonly organizationId: string },
    origin: RunOrigin,
    idempotencyKey: string,
    spec: RunSpec,
    timing: RunTiming
  ): Effect.Effect<RunOutcome, RunError> =>
    Effect.gen(function*() {
      const admitStarted = performance.now()
      const outcome = yield* admission.admit({
        organizationId: actor.organizationId,
        origin,
        idempotencyKey,
        kind: spec.kind,
        inputDigest: spec.inputDigest,
        holdTokens: spec.holdTokens,
        deadline: timing.started + spec.deadlineMs
      }).pipe(Effect.ensuring(Effect.sync(() => {
        timing.admitMs = performance.now() - admitStarted
      })))
      if (outcome._tag === "Replayed") return { row: outcome.run, replayed: true }
      const run = outcome.run
      const base = {
        id: run.id,
        organization_id: actor.organizationId,
        origin,
        idempotency_key: idempotencyKey,
        kind: spec.kind,
        input_digest: spec.inputDigest,
        hold_micros: SPEND_CEILING_MICROS,
        hold_tokens: spec.holdTokens,
        created_at: run.createdAt
      }
      if (spec.plan === null) {
        yield* settle(actor.organizationId, run, { state: "pending", output: null, error: null, calls: [] })
        return yield* new NoRouteAvailable({ message: "no route serves verdict runs yet" })
      }
      const upstreamStarted = performance.now()
      const early = recorder.forRun(actor.organizationId)
      const result = yield* executeDecisionWith(provider, spec.plan, {
        state: spec.prompt,
        draws: spec.draws,
        thinkTokens: spec.thinkTokens,
        deadline: run.deadlineAt.getTime(),
        ceilingMicros: SPEND_CEILING_MICROS,
        pricePerMtokMicros: config.decisionPricePerMtokMicros,
        maxOutputTokens: spec.maxOutputTokens,
        onCalls: (calls) => early.add(ledgerCalls(run.id, calls))
      })
      timing.upstreamMs = performance.now() - upstreamStarted
      yield* early.stop
      const settleStarted = performance.now()
      if (result.error === null) {
        const output = {
          decision: {
            model: names.id,
            answers: result.answers,
            ...(Object.keys(result.skipped).length === 0 ? {} : { skipped: result.skipped })
          }
        }
        const final = yield* settle(actor.organizationId, run, { state: "completed", output, error: null, calls: result.calls })
        timing.settleMs = performance.now() - settleStarted
        return { row: { ...base, ...final }, replayed: false }
      }
      const state = callOccurred(result) ? "failed" : "pending"
      yield* settle(actor.organizationId, run, { state, output: null, error: result.error, calls: result.calls })
      return yield* Effect.fail(result.error)
    })

  /**
   * Runs the work in its own root fiber, which goes on (and settles the run) whatever happens to the caller;
   * answers with its outcome, or deadline_exceeded when the deadline comes first. One fiber and one timer per run.
   */
  const runWithin = (deadline: number, effect: Effect.Effect<RunOutcome, RunError>) =>
    Effect.flatMap(Effect.option(Effect.currentParentSpan), (parent) => Effect.async<RunOutcome, RunError>((resume) => {
      let answered = false
      const answer = (exit: Exit.Exit<RunOutcome, RunError>) => {
        if (answered) return
        answered = true
        clearTimeout(timer)
        resume(exit)
      }
      const timer = setTimeout(
        () => answer(Exit.fail(new DeadlineExceeded({ message: "the run's deadline passed before it settled" }))),
        Math.max(0, deadline - Date.now()) + DeadlineGraceMs
      )
      const traced = parent._tag === "Some" ? Effect.withParentSpan(effect, parent.value) : effect
      Runtime.runFork(runtime)(traced).addObserver(answer)
    }))

  return {
    /** Runs a request from `POST /v1/runs`. */
    create: (actor: ActorShape, request: RunRequest, idempotencyKeyHeader: string | undefined, timing: RunTiming) =>
      Effect.gen(function*() {
        const idempotencyKey = yield* checkIdempotencyKey(idempotencyKeyHeader)
        const spec = yield* compileRunSpec(request, names)
        return yield* runWithin(timing.started + spec.deadlineMs, work(actor, "runs", idempotencyKey, spec, timing))
      }),
    /** Runs an already compiled spec (the router's classification). */
    execute: (organizationId: string, origin: RunOrigin, idempotencyKey: string, spec: RunSpec, timing: RunTiming) =>
      runWithin(timing.started + spec.deadlineMs, work({ organizationId }, origin, idempotencyKey, spec, timing)),
    /** One stored run of an organization (either id spelling). */
    get: (organizationId: string, id: string) =>
      Effect.gen(function*() {
        const uuid = parseRunId(id)
        const notFound = new RunNotFound({ message: `no run ${id} in this organization` })
        if (Option.isNone(uuid)) return yield* notFound
        const row = yield* repo.get(organizationId, uuid.value)
        if (Option.isNone(row)) return yield* notFound
        return runView(row.value, true)
      }),
    /** A page of the organization's runs, newest first; `limit` clamped to 1-100 (default 20). */
    list: (organizationId: string, limit: number | undefined, offset: number | undefined) =>
      Effect.gen(function*() {
        const clamped = Math.min(100, Math.max(1, limit ?? 20))
        const start = offset ?? 0
        const rows = yield* repo.list(organizationId, clamped, start)
        return {
          runs: rows.map((row) => ({
            run_id: runId(row.id),
            kind: row.kind,
            state: row.state,
            input_digest: row.input_digest,
            ...(row.output_digest === null ? {} : { output_digest: row.output_digest }),
            replayed: true as const
          })),
          limit: clamped,
          offset: start
        }
      }),
    /** Registers work to do after each settlement (auto-recharge). */
    onSettled: (hook: (organizationId: string, result: SettlementResult) => Effect.Effect<void>) =>
      Effect.sync(() => void afterSettlement.push(hook)),
    /** The wire view of an outcome. */
    view: (outcome: RunOutcome): RunView => runView(outcome.row, outcome.replayed)
  }
})

/** The runs service. */
export class Runs extends Context.Tag("Runs")<Runs, Effect.Effect.Success<typeof make>>() {
  /** Runs over admission, the model provider and settlement. */
  static readonly layer = Layer.effect(Runs, make)
}
