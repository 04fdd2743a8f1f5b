/**
 * A run's work against its deadline (src/runs/RunExecution.ts, `startRun`), as `POST /v1/runs` runs it, with a ledger
 * whose settlement the test holds and the test's clock: the two ways a deadline can end. A settlement still queued
 * when the deadline and its grace pass yields to the failure the caller is told at once (from the deadline's timer),
 * and the work goes on until the run is settled, storing that failure. A settlement attempt under way at that moment
 * is waited for, and its outcome is the caller's.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Result, Schema } from "effect"
import { TestClock } from "effect/testing"
import { RunRequest } from "../../schema/RunsApi.js"
import type { CallRecorderService } from "../../src/ledger/CallRecorder.js"
import type { AdmissionOutcome, RunLedgerService, SettlementResult } from "../../src/ledger/RunLedger.js"
import type { RunEnd } from "../../src/ledger/Settlement.js"
import type { ModelProvider } from "../../src/providers/ModelProvider.js"
import { DeadlineGraceMs, runContext, type RunServices, startRun } from "../../src/runs/RunExecution.js"
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
  forRun: () => ({ add: () => {}, stop: Effect.void, flush: Effect.void })
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
      admit: (request) => Effect.sync(() => admitted(request)),
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
          committed: Effect.map(Deferred.await(release), commit)
        }
      }
    }
    return { ledger, release, settling, stored: () => stored }
  })

const servicesOf = (ledger: RunLedgerService): RunServices => ({ ledger, recorder, provider, modelId: "m", pricePerMtokMicros: 1_000_000 })

const request = { organizationId: "org_test", keyId: null, origin: "runs", idempotencyKey: "k-1", spec } as const

/** Turns of the scheduler enough for forked fibers to reach their next wait. */
const settle = Effect.repeat(Effect.yieldNow, { times: 10 })

/** Starts the run at the test clock's time (0); its answer awaited in a fiber of the test's. */
const start = (services: RunServices) =>
  Effect.gen(function*() {
    const run = yield* startRun(services, runContext(request, { started: 0 }))
    const answer = yield* Effect.forkChild(run.answer, { startImmediately: true })
    yield* settle
    return { work: run.work, answer }
  })

describe("a run's deadline", () => {
  it.effect("a settlement still queued at the deadline yields: the caller is told 504 at once, the work goes on", () =>
    Effect.gen(function*() {
      const held = yield* heldLedger(false)
      const { answer, work } = yield* start(servicesOf(held.ledger))
      yield* Deferred.await(held.settling)
      yield* TestClock.adjust(DeadlineMs + DeadlineGraceMs - 1)
      yield* settle
      assert.isUndefined(answer.pollUnsafe(), "not answered before the deadline and its grace")
      yield* TestClock.adjust(1)
      const exit = yield* Fiber.await(answer)
      const reason = onlyReason(exit)
      assert.isTrue(reason?._tag === "Fail" && reason.error._tag === "deadline_exceeded")
      // The work goes on until the run is settled, with the failure the caller was told.
      assert.isUndefined(work.pollUnsafe(), "the work goes on")
      yield* Deferred.succeed(held.release, undefined)
      assert.isTrue(Exit.isFailure(yield* Fiber.await(work)), "the work ends with the failure it stored")
      const stored = held.stored()!
      assert.strictEqual(stored.state, "failed")
      assert.strictEqual(stored.errorCode, "deadline_exceeded")
      assert.isNull(stored.output)
      assert.deepStrictEqual(stored.calls.map((call) => call.providerRequestId), ["chatcmpl-1"])
    }))

  for (const traced of [false, true]) {
    it.effect(`a part that throws ends the run as a defect, answered at once (spans ${traced ? "kept" : "off"})`, () =>
      Effect.gen(function*() {
        const held = yield* heldLedger(false)
        const broken: RunLedgerService = {
          ...held.ledger,
          admit: () => {
            throw new Error("a bug in admission")
          }
        }
        const { answer, work } = yield* start(servicesOf(broken))
        const exit = answer.pollUnsafe()
        assert.isDefined(exit, "answered at once, the clock not moved")
        assert.isTrue(onlyReason(exit!)?._tag === "Die", "a defect")
        assert.isTrue(Exit.isFailure(yield* Fiber.await(work)))
      }).pipe(Effect.withTracerEnabled(traced)))
  }

  it.effect("a settlement attempt under way at the deadline is waited for, and its outcome is the caller's", () =>
    Effect.gen(function*() {
      const held = yield* heldLedger(true)
      const { answer } = yield* start(servicesOf(held.ledger))
      yield* Deferred.await(held.settling)
      yield* TestClock.adjust(DeadlineMs + DeadlineGraceMs + 100)
      yield* settle
      assert.isUndefined(answer.pollUnsafe(), "the attempt under way is waited for")
      yield* Deferred.succeed(held.release, undefined)
      const exit = yield* Fiber.await(answer)
      assert.isTrue(Exit.isSuccess(exit))
      if (!Exit.isSuccess(exit)) return
      assert.strictEqual(exit.value.row.state, "completed")
      assert.strictEqual(held.stored()!.state, "completed")
    }))
})
