/**
 * `runNow` (src/runs/RunExecution.ts), the run's work against its deadline, as the direct route of `POST /v1/runs`
 * and `executeRun` run it: with a ledger whose settlement the test holds, the two ways a deadline can end. A
 * settlement still queued when the deadline and its grace pass yields to the failure the caller is told at once
 * (from a timer), and the work goes on until the run is settled, storing that failure. A settlement attempt under
 * way at that moment is waited for, and its outcome is the caller's.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Result, Schema } from "effect"
import { RunRequest } from "../../schema/RunsApi.js"
import type { CallRecorderService } from "../../src/ledger/CallRecorder.js"
import type { AdmissionOutcome, RunLedgerService, SettlementResult } from "../../src/ledger/RunLedger.js"
import type { RunEnd } from "../../src/ledger/Settlement.js"
import type { ModelProvider } from "../../src/providers/ModelProvider.js"
import {
  DeadlineGraceMs,
  type RunContext,
  runNow,
  type RunOutcome,
  type WorkError
} from "../../src/runs/RunExecution.js"
import { runFibers } from "../../src/runs/RunFibers.js"
import { compileRunSpec } from "../../src/runs/RunSpec.js"
import { onlyReason } from "../support/Exits.js"
import { oneQuestion } from "../support/Runs.js"

const DeadlineMs = 200

const spec = Result.getOrThrow(
  compileRunSpec(Schema.decodeUnknownSync(RunRequest)(oneQuestion({ deadline_ms: DeadlineMs })), { id: "m", alias: "m" })
)

/** An upstream that answers every read at once, "yes" at 0.9. */
const provider: ModelProvider["Service"] = {
  identity: { provider: "openai", modelId: "m" },
  read: () =>
    Effect.succeed({
      probabilities: [0.9, 0.1],
      calls: [{
        retryOrdinal: 0,
        status: "succeeded",
        inputTokens: 40,
        outputTokens: 1,
        providerRequestId: "chatcmpl-1",
        at: new Date(),
        purpose: "answer"
      }]
    })
}

const recorder: CallRecorderService = {
  record: () => Effect.void,
  forRun: () => ({ add: () => {}, stop: Effect.void, stopNow: (done) => done(), flushNow: (done) => done() })
}

/**
 * A ledger that admits at once and settles when the test says so: `attempting` says whether a settlement attempt is
 * under way (then the end can no longer be replaced), `release` lets it commit, `stored` is the end it committed.
 */
const heldLedger = (attempting: boolean) =>
  Effect.gen(function*() {
    const release = yield* Deferred.make<void>()
    const settling = yield* Deferred.make<void>()
    let stored: RunEnd | undefined
    const admitted = (request: Parameters<RunLedgerService["admit"]>[0]): AdmissionOutcome => ({
      _tag: "Admitted",
      run: {
        pending: {
          id: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
          organizationId: request.organizationId,
          origin: request.origin,
          idempotencyKey: request.idempotencyKey,
          kind: request.kind,
          inputDigest: request.inputDigest,
          period: "2026-11-01",
          holdMicros: request.holdMicros,
          holdTokens: request.holdTokens,
          createdAt: new Date(),
          deadlineAt: new Date(request.deadline),
          holder: "test",
          keyId: request.keyId
        },
        holdCredit: false,
        reservation: undefined
      }
    })
    const ledger: RunLedgerService = {
      admit: (request) => Effect.succeed(admitted(request)),
      admitNow: (request, done) => done(Exit.succeed(admitted(request))),
      settle: (_run, end) => {
        let current = end
        Deferred.doneUnsafe(settling, Exit.void)
        const commit = (): SettlementResult => {
          stored = current
          return { balanceMicros: null, rechargeDue: false, settledAt: new Date(), end: current, refused: false }
        }
        return {
          yieldTo: (fallback) => {
            if (attempting) return false
            current = fallback
            return true
          },
          committed: Effect.map(Deferred.await(release), commit),
          onCommitted: (callback) => Effect.runFork(Effect.map(Deferred.await(release), commit)).addObserver((exit) => {
            if (Exit.isSuccess(exit)) callback(exit.value)
          })
        }
      }
    }
    return { ledger, release, settling, stored: () => stored }
  })

const contextOf = (ledger: RunLedgerService): RunContext => ({ ledger, recorder, provider, modelId: "m", pricePerMtokMicros: 1_000_000 })

const request = { organizationId: "org_test", keyId: null, origin: "runs", idempotencyKey: "k-1", spec } as const

/**
 * Starts the run (with spans kept around its parts when `traced`, as `executeRun` keeps them; without, as the direct
 * route runs it); its answer and its end once settled, as deferreds the test awaits.
 */
const start = (context: RunContext, traced = false) =>
  Effect.gen(function*() {
    const answered = yield* Deferred.make<{ readonly exit: Exit.Exit<RunOutcome, WorkError>; readonly at: number }>()
    const settled = yield* Deferred.make<Exit.Exit<RunOutcome, WorkError>>()
    const fibers = { ...runFibers(yield* Effect.context<never>(), { requestId: "req_test" }), traced }
    const started = Date.now()
    let answers = 0
    runNow(
      context,
      fibers,
      request,
      { started },
      (exit) => {
        answers++
        Deferred.doneUnsafe(answered, Exit.succeed({ exit, at: Date.now() }))
      },
      (exit) => Deferred.doneUnsafe(settled, Exit.succeed(exit))
    )
    return { answered, settled, started, answers: () => answers }
  })

describe("a run's deadline", () => {
  it.live("a settlement still queued at the deadline yields: the caller is told 504 at once, the work goes on", () =>
    Effect.gen(function*() {
      const held = yield* heldLedger(false)
      const { answered, settled, started } = yield* start(contextOf(held.ledger))
      yield* Deferred.await(held.settling)
      const { at, exit } = yield* Deferred.await(answered)
      const reason = onlyReason(exit)
      assert.isTrue(reason?._tag === "Fail" && reason.error._tag === "deadline_exceeded")
      assert.isAtLeast(at - started, DeadlineMs + DeadlineGraceMs - 5)
      assert.isBelow(at - started, DeadlineMs + DeadlineGraceMs + 500)
      // The work goes on until the run is settled, with the failure the caller was told.
      assert.isFalse(yield* Deferred.isDone(settled))
      yield* Deferred.succeed(held.release, undefined)
      const work = yield* Deferred.await(settled)
      assert.isTrue(Exit.isFailure(work), "the work ends with the failure it stored")
      const stored = held.stored()!
      assert.strictEqual(stored.state, "failed")
      assert.strictEqual(stored.errorCode, "deadline_exceeded")
      assert.isNull(stored.output)
      assert.deepStrictEqual(stored.calls.map((call) => call.providerRequestId), ["chatcmpl-1"])
    }))

  for (const traced of [false, true]) {
    it.live(`a part that throws ends the run as a defect, answered once and at once (spans ${traced ? "kept" : "off"})`, () =>
      Effect.gen(function*() {
        const held = yield* heldLedger(false)
        const broken: RunLedgerService = {
          ...held.ledger,
          admitNow: () => {
            throw new Error("a bug in admission")
          }
        }
        const { answered, answers, settled, started } = yield* start(contextOf(broken), traced)
        const { at, exit } = yield* Deferred.await(answered)
        assert.isTrue(onlyReason(exit)?._tag === "Die", "a defect")
        assert.isBelow(at - started, DeadlineMs, "at once, not from the deadline's timer")
        assert.isTrue(Exit.isFailure(yield* Deferred.await(settled)))
        yield* Effect.sleep(`${DeadlineMs + DeadlineGraceMs + 50} millis`)
        assert.strictEqual(answers(), 1, "the deadline's timer is stopped")
      }))
  }

  it.live("a settlement attempt under way at the deadline is waited for, and its outcome is the caller's", () =>
    Effect.gen(function*() {
      const held = yield* heldLedger(true)
      const { answered } = yield* start(contextOf(held.ledger))
      yield* Deferred.await(held.settling)
      yield* Effect.sleep(`${DeadlineMs + DeadlineGraceMs + 100} millis`)
      assert.isFalse(yield* Deferred.isDone(answered))
      yield* Deferred.succeed(held.release, undefined)
      const { exit } = yield* Deferred.await(answered)
      assert.isTrue(Exit.isSuccess(exit))
      if (!Exit.isSuccess(exit)) return
      assert.strictEqual(exit.value.row.state, "completed")
      assert.strictEqual(held.stored()!.state, "completed")
    }))
})
