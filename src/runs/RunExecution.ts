/**
 * One run from admission to its answer, in the contract's order: admission (RunLedger: quota, idempotency, credit),
 * the model (never inside a transaction, within the deadline, each answered call recorded as it ends), settlement
 * (the run's one synchronous commit), then the answer. The deadline answers `504` at most `DeadlineGraceMs` after it
 * passes, and the run is then stored as the failure the caller was told (never `completed`): before settlement the
 * run is marked so, while its settlement waits its turn it yields to that failure, and while a settlement attempt is
 * under way the answer waits for it (it may store the run completed, and the caller then hears so). The work goes on
 * when the caller goes away, so every run is settled and every answered call billed.
 *
 * The flow itself is plain code (`runNow`): each part reports to the next through a callback, and only the parts that
 * are Effects run in the runtime, each in a fiber of the request's (`RunFibers`, RunFibers.ts): admission's ways other
 * than the fast one, the decision engine's reads where the provider has no `readNow` or spans are kept, a call's
 * retries. A run the slices cover, read by a provider with `readNow` while spans are off, takes no fiber of its own;
 * as one Effect program it took some 140 steps of the runtime (each about a microsecond under load) and the generators
 * around them. `executeRun` is the same flow as an Effect, for the router and the API's own route.
 */
import { Context, Effect, Exit, References, Tracer } from "effect"
import { CurrentRequestId, DeadlineExceeded, NoRouteAvailable } from "../../schema/Errors.js"
import type {
  AdmissionError,
  AdmissionOutcome,
  AdmittedRun,
  RunLedgerService,
  SettlementResult,
  Settling
} from "../ledger/RunLedger.js"
import type { LedgerCall, RunOrigin, RunRow } from "../ledger/RunRecord.js"
import type { RunEnd } from "../ledger/Settlement.js"
import type { CallRecorderService } from "../ledger/CallRecorder.js"
import { type EngineError, type EngineResult, executeDecisionNow } from "./DecisionEngine.js"
import { type AnsweringModel, deadlineEnd, deadlineError, engineEnd, ledgerCalls, settledRow } from "./RunEnds.js"
import { type RunFibers, runFibers } from "./RunFibers.js"
import { SPEND_CEILING_MICROS } from "./RunLimits.js"
import type { RunSpec } from "./RunSpec.js"
import { runId } from "./RunView.js"
import { enterUpstream, leaveUpstream } from "../http/UpstreamWaits.js"

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

/** Anything the work of a run can end with besides a settled run. */
export type WorkError = AdmissionError | EngineError | NoRouteAvailable | DeadlineExceeded

/** How long after the deadline the caller is answered `504` while the run's work goes on. */
export const DeadlineGraceMs = 50

/** How often, past the deadline, a settlement attempt under way is looked at again. */
const RecheckMs = 25

/** What the work of a run needs. */
export interface RunContext extends AnsweringModel {
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

/** How a part of the run reports its end, once. */
type Done<A, E> = (exit: Exit.Exit<A, E>) => void

/** A run's end as the engine left it, and the error it stopped with, if any. */
interface Finished {
  readonly end: RunEnd
  readonly error: EngineError | null
}

/** What the deadline and the work share: whether a failure was answered, the settlement once it started. */
interface Race {
  answered: boolean
  settling: Settling | undefined
  /** The calls of the run being settled, for the failure that replaces its end if the deadline wins. */
  calls: ReadonlyArray<LedgerCall>
}

/**
 * `body`, with whatever it throws ending the run as a defect: the flow's callbacks are called from the runtime's
 * observers and from batches' completions, which must not be broken by a bug here.
 */
const guarded = <A, E>(done: Done<A, E>, body: () => void): void => {
  try {
    body()
  } catch (defect) {
    done(Exit.die(defect))
  }
}

/**
 * A part of the run reporting through `done`, inside a span named `name` while spans are kept: the part then runs in
 * a fiber of the request's, under its span.
 */
const spanned = <A, E>(
  fibers: RunFibers,
  name: string,
  attributes: Record<string, unknown>,
  part: (done: Done<A, E>) => void,
  done: Done<A, E>
): void => {
  if (!fibers.traced) return part(done)
  fibers.fork(Effect.withSpan(Effect.callback<A, E>((resume) => part(resume)), name, { attributes })).addObserver(done)
}

/** The run's answer once its settlement committed: what was stored, or the failure the caller is to be told. */
const answerOf = (
  run: AdmittedRun,
  spec: RunSpec,
  finished: Finished,
  result: SettlementResult
): Exit.Exit<RunOutcome, WorkError> => {
  if (result.refused) return Exit.die(new Error(`PostgreSQL refused the outcome of run ${run.pending.id}`))
  if (result.end !== finished.end) return Exit.fail(deadlineError())
  if (finished.error !== null) return Exit.fail(finished.error)
  return Exit.succeed({ row: settledRow(run, spec, result.end, result.settledAt), replayed: false })
}

/** Settles a run with its end (or the failure its caller was already told) and answers with what was stored. */
const settle = (
  context: RunContext,
  fibers: RunFibers,
  race: Race,
  run: AdmittedRun,
  spec: RunSpec,
  finished: Finished,
  done: Done<RunOutcome, WorkError>
): void => {
  const end = race.answered ? deadlineEnd(finished.end.calls) : finished.end
  race.calls = finished.end.calls
  const settling = context.ledger.settle(run, end)
  race.settling = settling
  settling.onCommitted((result) => guarded(done, () => done(answerOf(run, spec, finished, result))), fibers.fork)
}

/** The decision engine on the run's plan (its Effects in fibers of the request's); its calls recorded early as they end. */
const readAll = (context: RunContext, fibers: RunFibers, request: RunRequestShape, run: AdmittedRun, done: Done<EngineResult, never>) => {
  const { spec } = request
  const early = context.recorder.forRun(request.organizationId)
  executeDecisionNow(context.provider, spec.plan!, {
    state: spec.prompt,
    draws: spec.draws,
    thinkTokens: spec.thinkTokens,
    deadline: run.pending.deadlineAt.getTime(),
    ceilingMicros: SPEND_CEILING_MICROS,
    pricePerMtokMicros: context.pricePerMtokMicros,
    maxOutputTokens: spec.maxOutputTokens,
    onCalls: (calls) => early.add(ledgerCalls(context, run.pending.id, calls)),
    beforeReads: early.flushNow
  }, fibers, (exit) => early.stopNow(() => done(exit)))
}

/** After admission: the model's reads, then settlement; each part timed for `Server-Timing`. */
const readAndSettle = (
  context: RunContext,
  fibers: RunFibers,
  race: Race,
  request: RunRequestShape,
  timing: RunTiming,
  run: AdmittedRun,
  done: Done<RunOutcome, WorkError>
): void => {
  const { spec } = request
  const settleTimed = (finished: Finished, then: Done<RunOutcome, WorkError>) => {
    const started = performance.now()
    spanned(fibers, "run.settle", { "arbiter.run_id": runId(run.pending.id) }, (settled: Done<RunOutcome, WorkError>) =>
      settle(context, fibers, race, run, spec, finished, settled), (exit) => {
      timing.settleMs = performance.now() - started
      then(exit)
    })
  }
  if (spec.plan === null) {
    const none = { state: "pending", output: null, outputDigest: null, errorCode: null, errorMessage: null, calls: [] } as const
    return settleTimed({ end: none, error: null }, (exit) =>
      done(Exit.isFailure(exit) ? exit : Exit.fail(new NoRouteAvailable({ message: "no route serves verdict runs yet" }))))
  }
  const started = performance.now()
  // Counted as waiting on the upstream for the overload guard while the reads last, however they end.
  enterUpstream()
  readAll(context, fibers, request, run, (exit) => {
    leaveUpstream()
    timing.upstreamMs = performance.now() - started
    guarded(done, () => {
      if (Exit.isFailure(exit)) return done(Exit.failCause(exit.cause))
      settleTimed(engineEnd(context, run.pending.id, exit.value), done)
    })
  })
}

/** The work of a run: admission, then the reads and settlement; `done` gets its end, once. */
const work = (context: RunContext, fibers: RunFibers, race: Race, request: RunRequestShape, timing: RunTiming, done: Done<RunOutcome, WorkError>) => {
  const { spec } = request
  const started = performance.now()
  const admission = {
    organizationId: request.organizationId,
    origin: request.origin,
    idempotencyKey: request.idempotencyKey,
    kind: spec.kind,
    inputDigest: spec.inputDigest,
    holdMicros: SPEND_CEILING_MICROS,
    holdTokens: spec.holdTokens,
    deadline: timing.started + spec.deadlineMs,
    keyId: request.keyId
  }
  const admit = (admitted: Done<AdmissionOutcome, AdmissionError>) => context.ledger.admitNow(admission, admitted, fibers.fork)
  spanned(fibers, "run.admit", { "arbiter.organization_id": request.organizationId }, admit, (exit) => {
    timing.admitMs = performance.now() - started
    guarded(done, () => {
      if (Exit.isFailure(exit)) return done(Exit.failCause(exit.cause))
      const outcome = exit.value
      if (outcome._tag === "Replayed") return done(Exit.succeed({ row: outcome.run, replayed: true }))
      readAndSettle(context, fibers, race, request, timing, outcome.run, done)
    })
  })
}

/**
 * The work of a run against its deadline, outside the runtime: `answer` is called once, with the work's exit once
 * the run has settled, or with `deadline_exceeded` (from a timer) once the deadline and its grace passed first. Then
 * the run's own end is no longer the caller's (see the module header), and the work goes on until the run is
 * settled; `settled`, if given, is called when it is, with the work's exit.
 */
export const runNow = (
  context: RunContext,
  fibers: RunFibers,
  request: RunRequestShape,
  timing: RunTiming,
  answer: (exit: Exit.Exit<RunOutcome, WorkError>) => void,
  settled?: (exit: Exit.Exit<RunOutcome, WorkError>) => void
): void => {
  const race: Race = { answered: false, settling: undefined, calls: [] }
  // Past the deadline, a settlement attempt under way is waited for; should it fail (the database gone), the
  // run's end can then still be replaced, so the check repeats until one or the other happens.
  const expire = () => {
    if (race.answered) return
    if (race.settling !== undefined && !race.settling.yieldTo(deadlineEnd(race.calls))) {
      timer = setTimeout(expire, RecheckMs)
      return
    }
    race.answered = true
    answer(Exit.fail(deadlineError()))
  }
  let timer = setTimeout(expire, Math.max(0, timing.started + request.spec.deadlineMs - Date.now()) + DeadlineGraceMs)
  let ended = false
  const finish = (exit: Exit.Exit<RunOutcome, WorkError>) => {
    if (ended) return
    ended = true
    clearTimeout(timer)
    settled?.(exit)
    if (race.answered) return
    race.answered = true
    answer(exit)
  }
  guarded(finish, () => work(context, fibers, race, request, timing, finish))
}

/**
 * `runNow` as an Effect: answers with the run's outcome, or `deadline_exceeded` once the deadline and its grace have
 * passed while the work goes on. The run's Effects run with `services` under the caller's span and log with its
 * loggers and request id, in fibers of their own (`runFibers`, RunFibers.ts).
 */
export const executeRun = (
  context: RunContext,
  services: Context.Context<never>,
  request: RunRequestShape,
  timing: RunTiming
): Effect.Effect<RunOutcome, WorkError> =>
  Effect.withFiber<RunOutcome, WorkError>((caller) => {
    const fibers = runFibers(services, {
      requestId: caller.getRef(CurrentRequestId),
      loggers: caller.getRef(References.CurrentLoggers),
      parentSpan: Context.getOrUndefined(caller.context, Tracer.ParentSpan)
    })
    const traced = { ...fibers, traced: caller.getRef(References.TracerEnabled) }
    return Effect.callback<RunOutcome, WorkError>((resume) => runNow(context, traced, request, timing, resume))
  })
