/**
 * Runs a compiled decision against the `ModelProvider`: stages in order, up to 8 questions of a stage at once, the
 * draws of a question at once (draw d reads rotation d). A question whose conditions fail is skipped (answer null,
 * a `skipped` record); a question reads the earlier answers it depends on unless it is `alone`. Before each read
 * its worst case is held against the run's ceiling (RunBudget); the first error (a provider error, the deadline,
 * or budget_exhausted) stops further reads while reads already in flight complete and keep their calls.
 *
 * The engine is plain code (`executeDecisionNow`): its stages, questions and draws report to each other through
 * callbacks, and a read goes to the provider's `readNow` where it has one (OpenAiCompatible.ts), else runs the
 * provider's `read` in a fiber of the caller's. As one Effect program it took a fiber and some forty steps of the
 * runtime per run, about a tenth of the service's CPU per run under load. `executeDecisionWith` is the same engine as
 * an Effect, reading its fiber's clock.
 */
import { Cause, Clock, Effect, Exit, References, Result } from "effect"
import { BudgetExhausted, DeadlineExceeded, ProviderBadResponse } from "../../schema/Errors.js"
import { utf8Bytes } from "../encoding/Utf8.js"
import { type Fork, forkOf } from "../fibers/Fork.js"
import { letterPromptBytes } from "../providers/LetterReadout.js"
import type {
  ModelCall,
  ModelProvider,
  ProviderError,
  ProviderFailure,
  Read,
  ReadContext,
  ReadOutcome
} from "../providers/ModelProvider.js"
import { answerSummary, normalizeProbabilities, shapeAnswer } from "./Answers.js"
import type { Answer } from "./Answers.js"
import { skipReason } from "./Conditions.js"
import type { Skip } from "./Conditions.js"
import type { DecisionPlan, PlannedQuestion } from "./DecisionPlan.js"
import { averageDraws, rotateOptions } from "./Draws.js"
import type { DrawReading } from "./Draws.js"
import { makeRunBudget } from "./RunBudget.js"
import type { CostedCall, ReadEstimate, RunBudget } from "./RunBudget.js"

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
  /** Called as a question's reads are about to start; they start once it calls `start` (answered calls stored first). */
  readonly beforeReads?: ((start: () => void) => void) | undefined
}

/** A costed call with its place among the run's calls (0, 1, ...: the order the run learned of them). */
export interface IndexedCall extends CostedCall {
  readonly index: number
}

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

/**
 * Runs `run(item, next)` for each item, at most `limit` at once, and calls `done` once every item called its `next`.
 * An item's `next` may be called at once (before `run` returns) or later.
 */
const eachLimited = <A>(
  items: ReadonlyArray<A>,
  limit: number,
  run: (item: A, next: () => void) => void,
  done: () => void
): void => {
  if (items.length === 0) return done()
  let started = 0
  let running = 0
  let finished = 0
  const launch = () => {
    while (running < limit && started < items.length) {
      const item = items[started++]!
      running++
      run(item, () => {
        running--
        finished++
        if (finished === items.length) done()
        else launch()
      })
    }
  }
  launch()
}

/** Where the engine runs what is not plain code: Effects in fibers of the caller's, the clock, whether spans are kept. */
export interface EngineFibers {
  readonly fork: Fork
  /** The time now, in epoch ms (the runtime's clock). */
  readonly now: () => number
  /** Spans are kept: every read then goes through the provider's `read`, which makes them. */
  readonly traced: boolean
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
  readonly fibers: EngineFibers
  error: EngineError | null
  /** A defect of a read (a provider's bug): it stops further reads as an error does, and the engine dies with it. */
  defect: Cause.Cause<never> | null
}

const startRun = (provider: ModelProvider["Service"], plan: DecisionPlan, options: DecisionOptions, fibers: EngineFibers): Progress => ({
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
  fibers,
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

/** One read through the provider: its `readNow` where it has one and spans are not kept, else its `read` in a fiber. */
const readThrough = (
  progress: Progress,
  read: Read,
  options: { readonly deadline: number; readonly onCall: (call: ModelCall) => void },
  done: (exit: Exit.Exit<ReadOutcome, ProviderFailure>) => void
): void => {
  const { fibers, provider } = progress
  if (provider.readNow !== undefined && !fibers.traced) return provider.readNow(read, options, done, fibers.fork)
  fibers.fork(provider.read(read, options)).addObserver(done)
}

/** One draw of one question: held, read, its calls priced and reported; null when it was not read or failed. */
const readDraw = (
  progress: Progress,
  question: PlannedQuestion,
  draw: number,
  context: ReadonlyArray<ReadContext>,
  done: (reading: DrawReading | null) => void
): void => {
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
  const worst = admit(progress, progress.fibers.now(), estimate)
  if (worst === null) return done(null)
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
      return done(null)
    }
    const probabilities = outcome.success
    if (probabilities.length !== read.options.length) {
      progress.error ??= new ProviderBadResponse({
        message: `the model provider gave ${probabilities.length} probabilities for ${read.options.length} options`
      })
      return done(null)
    }
    done({ draw, probabilities })
  }
  readThrough(progress, read, { deadline: options.deadline, onCall: report }, (exit) => {
    if (Exit.isSuccess(exit)) return ended(exit.value.calls, Result.succeed(exit.value.probabilities))
    const failure = Cause.findError(exit.cause)
    if (Result.isSuccess(failure)) return ended(failure.success.calls, Result.fail(failure.success.error))
    // The provider died (a bug of its own): the engine stops reading and dies with it.
    progress.defect ??= failure.failure
    done(null)
  })
}

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
 * One question: skipped when its conditions fail, else its draws read at once (once `beforeReads` lets them start)
 * and averaged into its answer.
 */
const ask = (progress: Progress, question: PlannedQuestion, done: () => void): void => {
  if (progress.error !== null || progress.defect !== null) return done()
  const skip = skipReason(question, progress.questions, progress.readings)
  if (skip !== null) {
    progress.answers.set(question.id, null)
    progress.skipped.set(question.id, skip)
    return done()
  }
  const { beforeReads } = progress.options
  if (beforeReads !== undefined) return beforeReads(() => readDraws(progress, question, done))
  readDraws(progress, question, done)
}

/** A question's draws, read at once and averaged into its answer. */
const readDraws = (progress: Progress, question: PlannedQuestion, done: () => void): void => {
  const context = contextOf(progress, question)
  const draws = progress.options.draws
  const readings: Array<DrawReading | null> = new Array(draws).fill(null)
  let left = draws
  for (let draw = 0; draw < draws; draw++) {
    readDraw(progress, question, draw, context, (reading) => {
      readings[draw] = reading
      if (--left > 0) return
      const complete = readings.filter((item): item is DrawReading => item !== null)
      if (complete.length === draws) {
        const probabilities = normalizeProbabilities(averageDraws(question.options.length, complete))
        progress.readings.set(question.id, probabilities)
        progress.answers.set(question.id, shapeAnswer(question, probabilities))
      }
      done()
    })
  }
}

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

/** The stages from `index` on, in order, each question of a stage at most `QUESTION_CONCURRENCY` at once. */
const runStages = (progress: Progress, index: number, done: () => void): void => {
  const stage = progress.plan.stages[index]
  if (stage === undefined || progress.error !== null || progress.defect !== null) return done()
  eachLimited(stage, QUESTION_CONCURRENCY, (question, next) => ask(progress, question, next), () =>
    runStages(progress, index + 1, done))
}

/**
 * Reads every question of `plan` with `provider` and shapes the answers, outside the runtime; `done` is called once
 * with the result. Never fails: provider errors, the deadline and budget_exhausted end up in `error`, with every call
 * made so far in `calls` (only a provider's defect ends it with that defect). The caller settles the run `failed`
 * when `error` is set and `callOccurred(result)`, and leaves it `pending` when `error` is set and no call occurred.
 */
export const executeDecisionNow = (
  provider: ModelProvider["Service"],
  plan: DecisionPlan,
  options: DecisionOptions,
  fibers: EngineFibers,
  done: (exit: Exit.Exit<EngineResult>) => void
): void => {
  const progress = startRun(provider, plan, options, fibers)
  let ended = false
  const end = (exit: Exit.Exit<EngineResult>) => {
    if (ended) return
    ended = true
    done(exit)
  }
  try {
    runStages(progress, 0, () => end(progress.defect !== null ? Exit.failCause(progress.defect) : Exit.succeed(resultOf(progress))))
  } catch (defect) {
    end(Exit.die(defect))
  }
}

/** `executeDecisionNow` as an Effect: its reads' fibers made from the current fiber's context, its clock read there. */
export const executeDecisionWith = (
  provider: ModelProvider["Service"],
  plan: DecisionPlan,
  options: DecisionOptions
): Effect.Effect<EngineResult> =>
  Effect.withFiber((fiber) => {
    const clock = fiber.getRef(Clock.Clock)
    const fibers: EngineFibers = {
      fork: forkOf(fiber),
      now: () => clock.currentTimeMillisUnsafe(),
      traced: fiber.getRef(References.TracerEnabled)
    }
    return Effect.callback<EngineResult>((resume) => executeDecisionNow(provider, plan, options, fibers, resume))
  })
