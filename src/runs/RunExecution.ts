/**
 * One run from admission to its answer, in the contract's order: admission (RunLedger: quota, idempotency, credit),
 * the model (never inside a transaction, within the deadline, each answered call recorded as it ends), settlement
 * (the run's one synchronous commit), then the answer. The deadline answers `504` at most `DeadlineGraceMs` after it
 * passes, and the run is then stored as the failure the caller was told (never `completed`): before settlement the
 * run is marked so, while its settlement waits its turn it yields to that failure, and while a settlement attempt is
 * under way the answer waits for it (it may store the run completed, and the caller then hears so). The work goes on
 * when the caller goes away, so every run is settled and every answered call billed: it runs in a fiber of its own,
 * detached from the caller's (it carries the caller's services, request id, loggers and span), and the caller waits
 * for whichever comes first, its end or the deadline's timer (on the fiber's `Clock`).
 */
import { Cause, Clock, Duration, Effect, Exit, type Fiber } from "effect"
import { DeadlineExceeded, NoRouteAvailable } from "../../schema/Errors.js"
import type { CallRecorderService } from "../ledger/CallRecorder.js"
import type { AdmissionError, AdmittedRun, RunLedgerService, SettlementResult, Settling } from "../ledger/RunLedger.js"
import type { LedgerCall, RunOrigin, RunRow } from "../ledger/RunRecord.js"
import type { RunEnd } from "../ledger/Settlement.js"
import type { TimingMarks } from "../http/ServerTiming.js"
import { withTracedSpan } from "../telemetry/Spans.js"
import { type EngineError, executeDecision } from "./DecisionEngine.js"
import { type AnsweringModel, deadlineEnd, deadlineError, engineEnd, ledgerCalls, settledRow } from "./RunEnds.js"
import { SPEND_CEILING_MICROS } from "./RunLimits.js"
import type { RunSpec } from "./RunSpec.js"
import { runId } from "./RunView.js"
import { enterUpstream, leaveUpstream } from "../providers/UpstreamWaits.js"

/** When a request started (epoch ms, for its deadline) and how long its parts took (ms, for `Server-Timing`). */
export type RunTiming = Omit<TimingMarks, "startedPrecise">

/** How a run ended, for the caller. */
export interface RunOutcome {
  readonly row: RunRow
  readonly replayed: boolean
}

/** Anything the work of a run can end with besides a settled run. */
export type WorkError = AdmissionError | EngineError | NoRouteAvailable | DeadlineExceeded

/** How long after the deadline the caller is answered `504` while the run's work goes on. */
export const DeadlineGraceMs = 50

/** How often, past the deadline, a settlement attempt under way is looked at again. */
const RecheckMs = 25

/** The services the work of a run uses: the ledger, the early recorder, the model and its price. */
export interface RunServices extends AnsweringModel {
  readonly ledger: RunLedgerService
  readonly recorder: CallRecorderService
  readonly pricePerMtokMicros: number
}

/** A run to execute: its organization, origin, idempotency key and compiled spec. */
export interface RunRequestShape {
  readonly organizationId: string
  /** The API key asking (null for a console session). */
  readonly keyId: string | null
  readonly origin: RunOrigin
  readonly idempotencyKey: string
  readonly spec: RunSpec
}

/**
 * One run as it travels through its flow: the request, its timing marks, its deadline (epoch ms), and what the
 * deadline and the work share (`answered`: the caller was told the deadline's failure; the settlement once it started,
 * with the calls of its end, for the failure that replaces that end if the deadline wins).
 */
export interface RunContext {
  readonly request: RunRequestShape
  readonly timing: RunTiming
  readonly deadline: number
  answered: boolean
  settling: Settling | undefined
  calls: ReadonlyArray<LedgerCall>
}

/** The context of a run started at `timing.started`. */
export const runContext = (request: RunRequestShape, timing: RunTiming): RunContext => ({
  request,
  timing,
  deadline: timing.started + request.spec.deadlineMs,
  answered: false,
  settling: undefined,
  calls: []
})

/** A run's end as the engine left it, and the error it stopped with, if any. */
type Finished = ReturnType<typeof engineEnd>

/** How long `effect` takes from `started` (`performance.now()`, in a step already under way), handed to `mark`. */
const timedFrom = <A, E>(started: number, mark: (ms: number) => void, effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.onExit(effect, () => {
    mark(performance.now() - started)
    return Effect.void
  })

/** The run's answer once its settlement committed: what was stored, or the failure the caller is to be told. */
const answerOf = (run: AdmittedRun, spec: RunSpec, finished: Finished, result: SettlementResult): Effect.Effect<RunOutcome, WorkError> => {
  if (result.refused) return Effect.die(new Error(`PostgreSQL refused the outcome of run ${run.pending.id}`))
  if (result.end !== finished.end) return Effect.fail(deadlineError())
  if (finished.error !== null) return Effect.fail(finished.error)
  return Effect.succeed({ row: settledRow(run, spec, result.end, result.settledAt), replayed: false })
}

/** Settles a run with its end (or the failure its caller was already told) and answers with what was stored. */
const settle = (services: RunServices, context: RunContext, run: AdmittedRun, finished: Finished) =>
  Effect.suspend(() => {
    const started = performance.now()
    const end = context.answered ? deadlineEnd(finished.end.calls) : finished.end
    context.calls = finished.end.calls
    const settling = services.ledger.settle(run, end)
    context.settling = settling
    const answer = Effect.flatMap(settling.committed, (result) => answerOf(run, context.request.spec, finished, result))
    return timedFrom(started, (ms) => context.timing.settleMs = ms, answer)
  }).pipe(withTracedSpan("run.settle", { attributes: { "arbiter.run_id": runId(run.pending.id) } }))

/**
 * The decision engine on the run's plan, its calls recorded early as they end; counted as waiting on the upstream
 * for the overload guard while the reads last, however they end.
 */
const readAll = (services: RunServices, context: RunContext, run: AdmittedRun) => {
  const { organizationId, spec } = context.request
  return Effect.suspend(() => {
    const started = performance.now()
    const early = services.recorder.forRun(organizationId)
    enterUpstream()
    return executeDecision(services.provider, spec.plan!, {
      state: spec.prompt,
      draws: spec.draws,
      thinkTokens: spec.thinkTokens,
      deadline: run.pending.deadlineAt.getTime(),
      ceilingMicros: SPEND_CEILING_MICROS,
      pricePerMtokMicros: services.pricePerMtokMicros,
      maxOutputTokens: spec.maxOutputTokens,
      onCalls: (calls) => early.add(ledgerCalls(services, run.pending.id, calls)),
      beforeReads: early.flush
    }).pipe(Effect.onExit(() => {
      context.timing.upstreamMs = performance.now() - started
      leaveUpstream()
      return early.stop
    }))
  })
}

/** No route serves a run without a plan (verdict runs): it is settled `pending` and refused. */
const NoPlanEnd: RunEnd = { state: "pending", output: null, outputDigest: null, errorCode: null, errorMessage: null, calls: [] }

/** After admission: the model's reads, then settlement. */
const readAndSettle = (services: RunServices, context: RunContext, run: AdmittedRun): Effect.Effect<RunOutcome, WorkError> => {
  if (context.request.spec.plan === null) {
    return Effect.andThen(
      settle(services, context, run, { end: NoPlanEnd, error: null }),
      Effect.fail(new NoRouteAvailable({ message: "no route serves verdict runs yet" }))
    )
  }
  return Effect.flatMap(readAll(services, context, run), (result) =>
    settle(services, context, run, engineEnd(services, run.pending.id, result)))
}

/** The work of a run: admission, then the reads and settlement. */
const work = (services: RunServices, context: RunContext): Effect.Effect<RunOutcome, WorkError> =>
  Effect.suspend(() => {
    const started = performance.now()
    const { organizationId, spec } = context.request
    const admitting = services.ledger.admit({
      organizationId,
      origin: context.request.origin,
      idempotencyKey: context.request.idempotencyKey,
      kind: spec.kind,
      inputDigest: spec.inputDigest,
      holdMicros: SPEND_CEILING_MICROS,
      holdTokens: spec.holdTokens,
      deadline: context.deadline,
      keyId: context.request.keyId
    }).pipe(
      withTracedSpan("run.admit", { attributes: { "arbiter.organization_id": organizationId } }),
      (admitting) => timedFrom(started, (ms) => context.timing.admitMs = ms, admitting)
    )
    return Effect.flatMap(admitting, (outcome) =>
      outcome._tag === "Replayed"
        ? Effect.succeed({ row: outcome.run, replayed: true })
        : readAndSettle(services, context, outcome.run))
  })

/**
 * The deadline's answer: once the deadline and its grace passed, `deadline_exceeded`, after the settlement (if one
 * started) yielded to the failure; while a settlement attempt is under way it is looked at again every `RecheckMs`
 * (should it fail, the database gone, the run's end can then still be replaced).
 */
const expiry = (context: RunContext, clock: Clock.Clock): Effect.Effect<never, DeadlineExceeded> => {
  const expire: Effect.Effect<never, DeadlineExceeded> = Effect.suspend(() => {
    if (context.settling !== undefined && !context.settling.yieldTo(deadlineEnd(context.calls))) {
      return Effect.andThen(Effect.sleep(RecheckMs), expire)
    }
    context.answered = true
    return Effect.fail(deadlineError())
  })
  const wait = Math.max(0, context.deadline - clock.currentTimeMillisUnsafe()) + DeadlineGraceMs
  return Effect.andThen(clock.sleep(Duration.millis(wait)), expire)
}

/**
 * The caller's answer: the work's end, or the deadline's failure should its timer (a fiber of the caller's, on the
 * caller's `Clock`) answer first. Whichever answers stops the other's wait; the work itself goes on.
 */
const callerAnswer = (work: Fiber.Fiber<RunOutcome, WorkError>, context: RunContext): Effect.Effect<RunOutcome, WorkError> =>
  Effect.withFiber((caller) => {
    const timer = Effect.runForkWith(caller.context)(expiry(context, caller.getRef(Clock.Clock)))
    return Effect.callback<RunOutcome, WorkError>((resume) => {
      let answered = false
      const answer = (exit: Exit.Exit<RunOutcome, WorkError>) => {
        if (answered) return
        answered = true
        stopWork()
        timer.interruptUnsafe()
        resume(exit)
      }
      const stopWork = work.addObserver(answer)
      timer.addObserver((exit) => Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause) && answer(exit))
      return Effect.sync(() => {
        stopWork()
        timer.interruptUnsafe()
      })
    })
  })

/**
 * Starts the work of a run in a fiber of its own, detached from the caller's, so it goes on to settle the run
 * whatever becomes of the caller: its fiber (which ends once the run is settled) and the caller's answer, the work's
 * end or `deadline_exceeded` once the deadline and its grace passed first (the work then stores that failure).
 */
export const startRun = (services: RunServices, context: RunContext) =>
  Effect.map(
    Effect.forkDetach(work(services, context), { startImmediately: true }),
    (fiber) => ({ work: fiber, answer: callerAnswer(fiber, context) })
  )

/** A run against its deadline: its outcome, or `deadline_exceeded` once the deadline passed (see `startRun`). */
export const executeRun = (services: RunServices, context: RunContext): Effect.Effect<RunOutcome, WorkError> =>
  Effect.flatMap(startRun(services, context), (started) => started.answer)
