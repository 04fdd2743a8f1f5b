/**
 * Runs a compiled decision against the `ModelProvider`: stages in order, up to 8 questions of a stage at once, the
 * draws of a question at once (draw d reads rotation d). A question whose conditions fail is skipped (answer null,
 * a `skipped` record); a question reads the earlier answers it depends on unless it is `alone`. Before each read
 * its worst case is held against the run's ceiling (RunBudget); the first error (a provider error, the deadline,
 * or budget_exhausted) stops further reads while reads already in flight complete and keep their calls. The engine
 * reads the fiber's `Clock` for the deadline; a read is the provider's `read`, so interrupting the engine ends the
 * upstream requests in flight.
 */
import { Cause, Clock, Effect, Exit, Result } from "effect"
import { BudgetExhausted, DeadlineExceeded, ProviderBadResponse } from "../../schema/Errors.js"
import { utf8Bytes } from "../encoding/Utf8.js"
import { letterPromptBytes } from "../providers/LetterReadout.js"
import type { ModelCall, ModelProvider, ProviderError, Read, ReadContext } from "../providers/ModelProvider.js"
import { type Answer, answerSummary, normalizeProbabilities, shapeAnswer } from "./Answers.js"
import { type Skip, skipReason } from "./Conditions.js"
import type { DecisionPlan, PlannedQuestion } from "./DecisionPlan.js"
import { averageDraws, type DrawReading, rotateOptions } from "./Draws.js"
import { type CostedCall, makeRunBudget, type ReadEstimate, type RunBudget } from "./RunBudget.js"

/** Most questions of one stage read at the same time. */
export const QUESTION_CONCURRENCY = 8

/** How to run a decision; the route has already checked the ranges. */
export interface DecisionOptions {
  /** The rendered state or messages (StateRendering). */
  readonly state: string
  /** Reads per question, 1 to 8. */
  readonly draws: number
  /** Most tokens of a thought before each letter, 0 to 4,096; capped at `maxOutputTokens` when that is set. */
  readonly thinkTokens: number
  /** Epoch milliseconds after which no read starts and calls in flight fail with deadline_exceeded. */
  readonly deadline: number
  /** The run's spend ceiling in micro-USD (20,000 by the spec). */
  readonly ceilingMicros: number
  readonly pricePerMtokMicros: number
  /** The run's `max_output_tokens`: no call may generate more, so it caps the thought. */
  readonly maxOutputTokens?: number | undefined
  /** Told of each call as soon as it ends (so answered calls can be recorded before settlement). */
  readonly onCalls?: ((calls: ReadonlyArray<IndexedCall>) => void) | undefined
  /**
   * Run as a question's reads are about to start, once a call of the run was reported; they start once it ends
   * (answered calls stored first).
   */
  readonly beforeReads?: Effect.Effect<void> | undefined
}

/** A costed call with its place among the run's calls (0, 1, ...: the order the run learned of them). */
export type IndexedCall = CostedCall & { readonly index: number }

/** Why a run stopped: a provider error or budget_exhausted. */
export type EngineError = ProviderError | BudgetExhausted

/** A finished (or stopped) run: answers, skips, every call with its cost, the error if any, and the totals. */
export interface EngineResult {
  /** Every question when `error` is null (null for a skipped one); otherwise only those settled before the stop. */
  readonly answers: Readonly<Record<string, Answer | null>>
  readonly skipped: Readonly<Record<string, Skip>>
  /** Every attempt of every read, in the order they ended. */
  readonly calls: ReadonlyArray<IndexedCall>
  readonly error: EngineError | null
  readonly costMicros: number
  readonly inputTokens: number
  readonly outputTokens: number
}

/**
 * True when at least one model call occurred (a `succeeded` call, billed): a run that ends in error then settles
 * `failed` and is charged; with none it stays `pending` and nothing is charged (decisions.md, Precise rules).
 */
export const callOccurred = (result: EngineResult): boolean => result.calls.some((call) => call.status === "succeeded")

const estimateRead = (read: Read, stateBytes: number): ReadEstimate => {
  const bytes = letterPromptBytes(read, stateBytes)
  return { answer: Math.ceil(bytes.answer / 4), think: Math.ceil(bytes.think / 4), followUp: Math.ceil(bytes.followUp / 4) }
}

/** What one decision run accumulates while its reads run; `error` is the first thing that stopped it. */
interface Progress {
  readonly provider: ModelProvider["Service"]
  readonly plan: DecisionPlan
  readonly options: DecisionOptions
  readonly questions: ReadonlyMap<string, PlannedQuestion>
  readonly readings: Map<string, ReadonlyArray<number>>
  readonly answers: Map<string, Answer | null>
  readonly skipped: Map<string, Skip>
  readonly calls: Array<IndexedCall>
  readonly budget: RunBudget
  readonly stateBytes: number
  /** The thought length of each read: the request's, capped at its `max_output_tokens`. */
  readonly thinkTokens: number
  error: EngineError | null
  /** A defect of a read (a provider's bug): it stops further reads as an error does, and the engine dies with it. */
  defect: Cause.Cause<never> | null
}

const startRun = (provider: ModelProvider["Service"], plan: DecisionPlan, options: DecisionOptions): Progress => ({
  provider,
  plan,
  options,
  questions: new Map(plan.questions.map((question) => [question.id, question])),
  readings: new Map(),
  answers: new Map(),
  skipped: new Map(),
  calls: [],
  budget: makeRunBudget(options.ceilingMicros, options.pricePerMtokMicros),
  stateBytes: utf8Bytes(options.state),
  thinkTokens: Math.min(options.thinkTokens, options.maxOutputTokens ?? options.thinkTokens),
  error: null,
  defect: null
})

/** Holds a read's worst case when the run may still read: its hold, or null once stopped (the reason in `error`). */
const admit = (progress: Progress, now: number, estimate: ReadEstimate): number | null => {
  if (progress.error !== null || progress.defect !== null) return null
  if (now >= progress.options.deadline) {
    progress.error = new DeadlineExceeded({ message: "the run's deadline passed before every question was read" })
    return null
  }
  const worst = progress.budget.worstCase(estimate, progress.thinkTokens)
  if (progress.budget.hold(worst)) return worst
  const { ceiling, held, spent } = progress.budget.snapshot()
  progress.error = new BudgetExhausted({
    message: `the next read could cost up to ${worst} micro-USD; with ${spent} spent and ${held} held that ` +
      `would pass the run's ceiling of ${ceiling}`
  })
  return null
}

/** One draw of one question: held, read, its calls priced and reported; null when it was not read or failed. */
const readDraw = (
  progress: Progress,
  question: PlannedQuestion,
  draw: number,
  context: ReadonlyArray<ReadContext>
): Effect.Effect<DrawReading | null> =>
  Effect.withFiber((fiber) => {
    const now = fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()
    const { budget, calls, options } = progress
    const read: Read = {
      state: options.state,
      context,
      instructions: question.instructions,
      type: question.type,
      options: rotateOptions(question.options, draw),
      thinkTokens: progress.thinkTokens
    }
    const estimate = estimateRead(read, progress.stateBytes)
    const worst = admit(progress, now, estimate)
    if (worst === null) return Effect.succeed(null)
    const hold = { remaining: worst }
    let reported = 0
    const report = (call: ModelCall) => {
      const costed: IndexedCall = { ...budget.price(hold, call), index: calls.length }
      calls.push(costed)
      reported += 1
      options.onCalls?.([costed])
    }
    /** The read ended with its calls and its probabilities, or the error it stopped with. */
    const ended = (readCalls: ReadonlyArray<ModelCall>, outcome: Result.Result<ReadonlyArray<number>, ProviderError>) => {
      // A provider that reports no call as it ends (the local model answers at once) has them reported here.
      readCalls.slice(reported).forEach(report)
      budget.release(hold, estimate, readCalls)
      if (Result.isFailure(outcome)) {
        progress.error ??= outcome.failure
        return null
      }
      const probabilities = outcome.success
      if (probabilities.length !== read.options.length) {
        progress.error ??= new ProviderBadResponse({
          message: `the model provider gave ${probabilities.length} probabilities for ${read.options.length} options`
        })
        return null
      }
      return { draw, probabilities }
    }
    return Effect.map(Effect.exit(progress.provider.read(read, { deadline: options.deadline, onCall: report })), (exit) => {
      if (Exit.isSuccess(exit)) return ended(exit.value.calls, Result.succeed(exit.value.probabilities))
      const failure = Cause.findError(exit.cause)
      if (Result.isSuccess(failure)) return ended(failure.success.calls, Result.fail(failure.success.error))
      // The provider died (a bug of its own): the engine stops reading and dies with it.
      progress.defect ??= failure.failure
      return null
    })
  })

/** The earlier answers a question's reads carry: none when it is `alone`, else those of what it depends on. */
const contextOf = (progress: Progress, question: PlannedQuestion): ReadonlyArray<ReadContext> =>
  question.alone ? [] : question.dependsOn.flatMap((id): Array<ReadContext> => {
    const earlier = progress.questions.get(id)
    const probabilities = progress.readings.get(id)
    return earlier === undefined || probabilities === undefined
      ? []
      : [{ question: id, instructions: earlier.instructions, answer: answerSummary(earlier.options, probabilities) }]
  })

/**
 * One question: skipped when its conditions fail, else its draws read at once (once `beforeReads` has ended) and
 * averaged into its answer.
 */
const ask = (progress: Progress, question: PlannedQuestion): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (progress.error !== null || progress.defect !== null) return Effect.void
    const skip = skipReason(question, progress.questions, progress.readings)
    if (skip !== null) {
      progress.answers.set(question.id, null)
      progress.skipped.set(question.id, skip)
      return Effect.void
    }
    // Before any call was reported there is nothing for `beforeReads` to wait on.
    const { beforeReads } = progress.options
    return beforeReads === undefined || progress.calls.length === 0
      ? readDraws(progress, question)
      : Effect.andThen(beforeReads, readDraws(progress, question))
  })

/** A question's draws, read at once and averaged into its answer. */
const readDraws = (progress: Progress, question: PlannedQuestion): Effect.Effect<void> =>
  Effect.suspend(() => {
    const context = contextOf(progress, question)
    const draws = Array.from({ length: progress.options.draws }, (_, draw) => readDraw(progress, question, draw, context))
    // One draw is read in the engine's own fiber, without the concurrent loop around it.
    const reading = draws.length === 1 ? Effect.map(draws[0]!, (one) => [one]) : Effect.all(draws, { concurrency: draws.length })
    return Effect.map(reading, (readings) => {
      const complete = readings.filter((item): item is DrawReading => item !== null)
      if (complete.length !== readings.length) return
      const probabilities = normalizeProbabilities(averageDraws(question.options.length, complete))
      progress.readings.set(question.id, probabilities)
      progress.answers.set(question.id, shapeAnswer(question, probabilities))
    })
  })

/** The run's result: answers and skips in the plan's order, the calls in the order they ended, the totals. */
const resultOf = (progress: Progress): EngineResult => {
  // Reads append their calls when they end; a stable sort by end time interleaves concurrent reads.
  const ordered = [...progress.calls].sort((a, b) => a.at.getTime() - b.at.getTime())
  const pick = <A>(from: ReadonlyMap<string, A>) =>
    Object.fromEntries(
      progress.plan.questions.flatMap((question) => from.has(question.id) ? [[question.id, from.get(question.id)!]] : [])
    )
  return {
    answers: pick(progress.answers),
    skipped: pick(progress.skipped),
    calls: ordered,
    error: progress.error,
    costMicros: ordered.reduce((sum, call) => sum + call.costMicros, 0),
    inputTokens: ordered.reduce((sum, call) => sum + call.inputTokens, 0),
    outputTokens: ordered.reduce((sum, call) => sum + call.outputTokens, 0)
  }
}

/** The stages in order, each question of a stage at most `QUESTION_CONCURRENCY` at once; none after a stop. */
const runStages = (progress: Progress): Effect.Effect<void> => {
  const { stages } = progress.plan
  return stages.length === 1 ? runStage(progress, stages[0]!) : Effect.forEach(stages, (stage) => runStage(progress, stage), {
    discard: true
  })
}

/** One stage: none after a stop; a lone question is asked as it is, without a loop around it. */
const runStage = (progress: Progress, stage: ReadonlyArray<PlannedQuestion>): Effect.Effect<void> =>
  progress.error !== null || progress.defect !== null
    ? Effect.void
    : stage.length === 1
    ? ask(progress, stage[0]!)
    : Effect.forEach(stage, (question) => ask(progress, question), {
      // One question (or one draw, above) runs in the engine's own fiber: a fiber per item only where they overlap.
      concurrency: Math.min(QUESTION_CONCURRENCY, stage.length),
      discard: true
    })

/**
 * Reads every question of `plan` with `provider` and shapes the answers. Never fails: provider errors, the deadline
 * and budget_exhausted end up in `error`, with every call made so far in `calls` (only a provider's defect ends it
 * with that defect). The caller settles the run `failed` when `error` is set and `callOccurred(result)`, and leaves it
 * `pending` when `error` is set and no call occurred.
 */
export const executeDecision = (
  provider: ModelProvider["Service"],
  plan: DecisionPlan,
  options: DecisionOptions
): Effect.Effect<EngineResult> =>
  Effect.suspend(() => {
    const progress = startRun(provider, plan, options)
    return Effect.flatMap(runStages(progress), () =>
      progress.defect !== null ? Effect.failCause(progress.defect) : Effect.succeed(resultOf(progress)))
  })
