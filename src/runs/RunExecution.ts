/**
 * One run from admission to its answer, in the contract's order: admission (RunLedger: quota, idempotency, credit),
 * the model (never inside a transaction, within the deadline, each answered call recorded as it ends), settlement
 * (the run's one synchronous commit), then the answer. The deadline answers `504` at most `DeadlineGraceMs` after it
 * passes, and the run is then stored as the failure the caller was told (never `completed`): before settlement the
 * run is marked so, while its settlement waits its turn it yields to that failure, and while a settlement attempt is
 * under way the answer waits for it (it may store the run completed, and the caller then hears so). The work goes on
 * in a fiber nothing interrupts when the caller goes away, so every run is settled and every answered call billed:
 * its own fiber (`executeRun`), or the direct route's (`runWithDeadline`, from src/runs/CreateRunRoute.ts).
 */
import { Context, Effect, Exit, type FiberId, FiberRef, FiberRefs, Runtime, Tracer } from "effect"
import { CurrentRequestId, DeadlineExceeded, NoRouteAvailable } from "../../schema/Errors.js"
import type { AdmissionError, AdmittedRun, RunLedgerService, Settling } from "../ledger/RunLedger.js"
import type { LedgerCall, RunOrigin, RunRow } from "../ledger/RunRecord.js"
import type { RunEnd } from "../ledger/Settlement.js"
import type { CallRecorderService } from "../ledger/CallRecorder.js"
import { type EngineError, executeDecisionWith } from "./DecisionEngine.js"
import { type AnsweringModel, deadlineEnd, deadlineError, engineEnd, ledgerCalls, settledRow } from "./RunEnds.js"
import { SPEND_CEILING_MICROS } from "./RunLimits.js"
import type { RunSpec } from "./RunSpec.js"
import { runId } from "./RunView.js"
import { withTracedSpan } from "../telemetry/Spans.js"
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

/** What the deadline and the work share: whether a failure was answered, the settlement once it started. */
interface Race {
  answered: boolean
  settling: Settling | undefined
  /** The calls of the run being settled, for the failure that replaces its end if the deadline wins. */
  calls: ReadonlyArray<LedgerCall>
}

/**
 * Times a part of the run, whatever its end; the upstream part is also counted as waiting on the upstream for the
 * overload guard while it lasts. The run's fiber is a root fiber nothing interrupts, so the part's exit is always
 * reached and the count is left as surely as the time is recorded: no uninterruptible region (`Effect.ensuring`, some
 * ten steps of the runtime) is needed around it, only the exit (two).
 */
const timed = <A, E>(effect: Effect.Effect<A, E>, record: (ms: number) => void, upstream = false) =>
  Effect.suspend(() => {
    const started = performance.now()
    if (upstream) enterUpstream()
    return Effect.flatMap(Effect.exit(effect), (exit) => {
      if (upstream) leaveUpstream()
      record(performance.now() - started)
      return exit
    })
  })

/** Settles a run with its end (or the failure its caller was already told) and answers with what was stored. */
const settle = (context: RunContext, race: Race, run: AdmittedRun, spec: RunSpec, finished: { end: RunEnd; error: EngineError | null }) =>
  Effect.gen(function*() {
    const end = race.answered ? deadlineEnd(finished.end.calls) : finished.end
    race.calls = finished.end.calls
    race.settling = context.ledger.settle(run, end)
    const result = yield* race.settling.committed
    if (result.refused) return yield* Effect.die(new Error(`PostgreSQL refused the outcome of run ${run.pending.id}`))
    if (result.end !== finished.end) return yield* Effect.fail<WorkError>(deadlineError())
    if (finished.error !== null) return yield* Effect.fail<WorkError>(finished.error)
    return { row: settledRow(run, spec, result.end, result.settledAt), replayed: false } satisfies RunOutcome
  })

const work = (context: RunContext, race: Race, request: RunRequestShape, timing: RunTiming): Effect.Effect<RunOutcome, WorkError> =>
  Effect.gen(function*() {
    const { spec } = request
    const outcome = yield* timed(
      context.ledger.admit({
        organizationId: request.organizationId,
        origin: request.origin,
        idempotencyKey: request.idempotencyKey,
        kind: spec.kind,
        inputDigest: spec.inputDigest,
        holdMicros: SPEND_CEILING_MICROS,
        holdTokens: spec.holdTokens,
        deadline: timing.started + spec.deadlineMs,
        keyId: request.keyId
      }).pipe(withTracedSpan("run.admit", { attributes: { "arbiter.organization_id": request.organizationId } })),
      (ms) => (timing.admitMs = ms)
    )
    if (outcome._tag === "Replayed") return { row: outcome.run, replayed: true }
    const run = outcome.run
    if (spec.plan === null) {
      const none = { state: "pending", output: null, outputDigest: null, errorCode: null, errorMessage: null, calls: [] } as const
      yield* settle(context, race, run, spec, { end: none, error: null })
      return yield* new NoRouteAvailable({ message: "no route serves verdict runs yet" })
    }
    const early = context.recorder.forRun(request.organizationId)
    const result = yield* timed(
      executeDecisionWith(context.provider, spec.plan, {
        state: spec.prompt,
        draws: spec.draws,
        thinkTokens: spec.thinkTokens,
        deadline: run.pending.deadlineAt.getTime(),
        ceilingMicros: SPEND_CEILING_MICROS,
        pricePerMtokMicros: context.pricePerMtokMicros,
        maxOutputTokens: spec.maxOutputTokens,
        onCalls: (calls) => early.add(ledgerCalls(context, run.pending.id, calls))
      }),
      (ms) => (timing.upstreamMs = ms),
      true
    )
    yield* early.stop
    return yield* timed(
      settle(context, race, run, spec, engineEnd(context, run.pending.id, result)).pipe(
        withTracedSpan("run.settle", { attributes: { "arbiter.run_id": runId(run.pending.id) } })
      ),
      (ms) => (timing.settleMs = ms)
    )
  })

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
 * The work of a run in the current fiber, against its deadline: the effect ends once the run has settled, with the
 * work's exit, unless the deadline and its grace passed first. Then `onDeadline` has already answered the caller
 * with `deadline_exceeded` (called from a timer, outside the fiber) and the effect ends with `null`: the run's own
 * end is no longer the caller's (see the module header). The fiber must be one nothing interrupts (a root fiber):
 * the run must settle whatever happens to the caller.
 */
export const runWithDeadline = (
  context: RunContext,
  request: RunRequestShape,
  timing: RunTiming,
  onDeadline: (error: DeadlineExceeded) => void
): Effect.Effect<Exit.Exit<RunOutcome, WorkError> | null> =>
  Effect.suspend(() => {
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
      onDeadline(deadlineError())
    }
    let timer = setTimeout(expire, Math.max(0, timing.started + request.spec.deadlineMs - Date.now()) + DeadlineGraceMs)
    return Effect.map(Effect.exit(work(context, race, request, timing)), (exit) => {
      clearTimeout(timer)
      if (race.answered) return null
      race.answered = true
      return exit
    })
  })

/**
 * Executes a run in its own root fiber, which goes on (and settles the run) whatever happens to the caller; answers
 * with its outcome, or `deadline_exceeded` once the deadline and its grace have passed (`runWithDeadline`). The
 * fiber runs under the request's span, and logs with the request's loggers and request id (`request_id`, `trace_id`):
 * they are set in its fiber refs as it is made, not by `Effect.locally` and `withParentSpan` around its work (each of
 * those is an uninterruptible acquire-use-release of some twenty steps of the runtime, on every run).
 */
export const executeRun = (
  context: RunContext,
  runtime: Runtime.Runtime<never>,
  request: RunRequestShape,
  timing: RunTiming
): Effect.Effect<RunOutcome, WorkError> =>
  Effect.withFiberRuntime<RunOutcome, WorkError>((caller) => {
    const parent = Context.getOption(caller.currentContext, Tracer.ParentSpan)
    const fiberContext = parent._tag === "Some" ? Context.add(runtime.context, Tracer.ParentSpan, parent.value) : runtime.context
    // The fiber's refs are already forked as its own (Runtime.runFork): these three are set as its values.
    const updateRefs = (refs: FiberRefs.FiberRefs, id: FiberId.Runtime) =>
      FiberRefs.updateManyAs(refs, {
        entries: [
          [CurrentRequestId, [[id, caller.getFiberRef(CurrentRequestId)]]],
          [FiberRef.currentLoggers, [[id, caller.getFiberRef(FiberRef.currentLoggers)]]],
          [FiberRef.currentContext, [[id, fiberContext]]]
        ]
      })
    return Effect.async<RunOutcome, WorkError>((resume) => {
      let answered = false
      const answer = (exit: Exit.Exit<RunOutcome, WorkError>) => {
        if (answered) return
        answered = true
        resume(exit)
      }
      Runtime.runFork(runtime)(runWithDeadline(context, request, timing, (error) => answer(Exit.fail(error))), {
        updateRefs
      }).addObserver((exit) => {
        // The work's own exit, unless the deadline answered already (null); a defect of the fiber itself otherwise.
        if (exit._tag === "Failure") answer(Exit.failCause(exit.cause))
        else if (exit.value !== null) answer(exit.value)
      })
    })
  })
