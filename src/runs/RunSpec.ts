/**
 * From a decoded `POST /v1/runs` body to what the run needs, checking what the schema cannot (check order step 5,
 * then 6): the prompt's shape (exactly one of `state` and `messages`), fields of the other kind, the question set
 * or the verdict schema, `model`, the kind's deadline bound, the capability hint, then the input estimate. Also
 * fixes the input digest (what decides idempotent equality), the default deadline and the token reservation. The
 * service's own decision runs (the router's classification) are specified here too, by the same rules, from a
 * question set compiled once (`compileInternalQuestions`, `internalDecisionSpec`).
 */
import { Result } from "effect"
import {
  InputTooLarge,
  InvalidBody,
  type InvalidDecisionQuestions,
  type InvalidVerdictSchema,
  UnknownModel
} from "../../schema/Errors.js"
import { CapabilityHintPattern, type RunRequest } from "../../schema/RunsApi.js"
import { canonicalDigest } from "../encoding/CanonicalJson.js"
import type { DecisionPlan } from "./DecisionPlan.js"
import {
  checkInputEstimate,
  contractBytes,
  defaultDeadlineMs,
  inputEstimate,
  inputLimit,
  MAX_VERDICT_DEADLINE_MS,
  promptBytes
} from "./RunLimits.js"
import { type CompileOptions, compileQuestions, type WireQuestion } from "./Questions.js"
import { renderMessages, renderState } from "./StateRendering.js"
import { checkVerdictSchema } from "./VerdictSchema.js"

/** The decision model's public names. */
export interface DecisionModelNames {
  readonly id: string
  readonly alias: string
}

/** A run ready for admission. */
export interface RunSpec {
  readonly kind: "decision" | "verdict"
  readonly plan: DecisionPlan | null
  readonly prompt: string
  readonly inputDigest: string
  readonly inputTokens: number
  readonly deadlineMs: number
  readonly holdTokens: number
  readonly draws: number
  readonly thinkTokens: number
  readonly maxOutputTokens: number | undefined
}

/** Why a request cannot become a run. */
export type RunSpecError = InvalidBody | InvalidDecisionQuestions | InvalidVerdictSchema | UnknownModel | InputTooLarge

/** Most output tokens a verdict may generate when the request sets none. */
export const DefaultVerdictOutputTokens = 4_096

const invalidBody = (message: string) => Result.fail(new InvalidBody({ message }))

/**
 * The capability hint's own check (step 5, after the contract): 1 to 64 characters of `[a-z0-9_.:-]`, else
 * `400 invalid_body` worded as the body schema words a pattern mismatch.
 */
const checkCapabilityHint = (hint: string | undefined): Result.Result<void, InvalidBody> =>
  hint === undefined || CapabilityHintPattern.test(hint)
    ? Result.succeed(undefined)
    : invalidBody(
      `invalid request body: capability_hint: Expected a string matching the pattern ${CapabilityHintPattern.source}, ` +
        `actual ${JSON.stringify(hint)}`
    )

/**
 * The tokens a decision run holds against the token quota: its input estimate and, for every model call it may
 * make (each question, each draw, a think call and a letter call when it thinks), the output it may generate.
 */
const decisionHoldTokens = (
  inputTokens: number,
  questions: number,
  draws: number,
  thinkTokens: number,
  maxOutputTokens: number | undefined
): number => {
  const calls = questions * draws * (thinkTokens > 0 ? 2 : 1)
  const perCall = maxOutputTokens ?? Math.max(1, thinkTokens)
  return inputTokens + perCall * calls
}

/**
 * The input estimate (check order step 6) of a rendered prompt, or `input_too_large`; an undefined prompt is one
 * whose rendering stopped past the limit.
 */
const estimateInput = (
  kind: "decision" | "verdict",
  prompt: string | undefined,
  contract: Parameters<typeof contractBytes>[0]
): Result.Result<number, InputTooLarge> =>
  prompt === undefined
    ? Result.fail(new InputTooLarge({
      message: `the rendered state is over ${4 * inputLimit(kind)} bytes, so its estimated input is over the ${kind} ` +
        `limit of ${inputLimit(kind)} tokens`
    }))
    : checkInputEstimate(kind, inputEstimate({ promptBytes: promptBytes(prompt), contractBytes: contractBytes(contract) }))

/** A request's prompt: its rendering (undefined once past the input limit) and the part of the digest it is. */
interface RenderedPrompt {
  readonly prompt: string | undefined
  readonly promptPart: { readonly messages: RunRequest["messages"] } | { readonly state: RunRequest["state"] }
}

/** A decision request's own checks, after its prompt's (step 5: questions, model, hint; then 6). */
const compileDecision = (
  request: RunRequest,
  model: DecisionModelNames,
  { prompt, promptPart }: RenderedPrompt
): Result.Result<RunSpec, RunSpecError> => {
  if (request.schema !== undefined) return invalidBody("`schema` belongs to verdict runs")
  const plan = compileQuestions(request.questions ?? {})
  if (Result.isFailure(plan)) return Result.fail(plan.failure)
  if (request.model !== undefined && request.model !== model.id && request.model !== model.alias) {
    return Result.fail(new UnknownModel({
      message: `model must be ${JSON.stringify(model.id)} or ${JSON.stringify(model.alias)}`
    }))
  }
  const hint = checkCapabilityHint(request.capability_hint)
  if (Result.isFailure(hint)) return Result.fail(hint.failure)
  const draws = request.draws ?? 1
  const thinkTokens = request.think_tokens ?? 0
  const contract = { instructions: request.instructions, questions: request.questions }
  const estimate = estimateInput("decision", prompt, contract)
  if (Result.isFailure(estimate)) return Result.fail(estimate.failure)
  return Result.succeed({
    kind: "decision",
    plan: plan.success,
    prompt: prompt!,
    inputDigest: canonicalDigest({ kind: "decision", ...promptPart, ...contract, draws, think_tokens: thinkTokens }),
    inputTokens: estimate.success,
    deadlineMs: request.deadline_ms ?? defaultDeadlineMs("decision", estimate.success),
    holdTokens: decisionHoldTokens(estimate.success, plan.success.questions.length, draws, thinkTokens, request.max_output_tokens),
    draws,
    thinkTokens,
    maxOutputTokens: request.max_output_tokens
  })
}

/** A verdict request's own checks, after its prompt's (step 5: decision fields, deadline, schema, hint; then 6). */
const compileVerdict = (request: RunRequest, { prompt, promptPart }: RenderedPrompt): Result.Result<RunSpec, RunSpecError> => {
  for (const field of ["questions", "draws", "think_tokens", "model"] as const) {
    if (request[field] !== undefined) return invalidBody(`\`${field}\` belongs to decision runs`)
  }
  if (request.deadline_ms !== undefined && request.deadline_ms > MAX_VERDICT_DEADLINE_MS) {
    return invalidBody(`deadline_ms: a verdict's deadline is 1 to ${MAX_VERDICT_DEADLINE_MS} ms`)
  }
  const schema = checkVerdictSchema(request.schema)
  if (Result.isFailure(schema)) return Result.fail(schema.failure)
  const hint = checkCapabilityHint(request.capability_hint)
  if (Result.isFailure(hint)) return Result.fail(hint.failure)
  const contract = { instructions: request.instructions, schema: schema.success }
  const estimate = estimateInput("verdict", prompt, contract)
  if (Result.isFailure(estimate)) return Result.fail(estimate.failure)
  return Result.succeed({
    kind: "verdict",
    plan: null,
    prompt: prompt!,
    inputDigest: canonicalDigest({ kind: "verdict", ...promptPart, ...contract }),
    inputTokens: estimate.success,
    deadlineMs: request.deadline_ms ?? defaultDeadlineMs("verdict", estimate.success),
    holdTokens: estimate.success + (request.max_output_tokens ?? DefaultVerdictOutputTokens),
    draws: 1,
    thinkTokens: 0,
    maxOutputTokens: request.max_output_tokens
  })
}

/** Compiles a request; the first problem in check order wins. */
export const compileRunSpec = (request: RunRequest, model: DecisionModelNames): Result.Result<RunSpec, RunSpecError> => {
  if ((request.state === undefined) === (request.messages === undefined)) {
    return invalidBody("send exactly one of `state` and `messages`")
  }
  if (request.messages !== undefined && request.messages.length === 0) return invalidBody("`messages` is empty")
  // Rendering stops once the text is certainly over the input limit (4 bytes per token, a code unit at least a byte).
  const rendered: RenderedPrompt = {
    prompt: request.messages !== undefined
      ? renderMessages(request.messages)
      : renderState(request.state, 4 * inputLimit(request.kind) + 1),
    promptPart: request.messages !== undefined ? { messages: request.messages } : { state: request.state }
  }
  return request.kind === "decision" ? compileDecision(request, model, rendered) : compileVerdict(request, rendered)
}

/** A question set of the service's own decision runs, compiled once, with the contract bytes it adds to a run. */
export interface InternalQuestionSet {
  readonly plan: DecisionPlan
  readonly contractBytes: number
}

/**
 * Compiles the question set of the service's own decision runs, which may carry conditions no request can (the
 * router's "P(family) >= 5%"); the failure names the question and the rule it broke.
 */
export const compileInternalQuestions = (
  questions: Readonly<Record<string, WireQuestion>>,
  options: CompileOptions
): Result.Result<InternalQuestionSet, InvalidDecisionQuestions> =>
  Result.map(compileQuestions(questions, options), (plan) => ({ plan, contractBytes: contractBytes({ questions }) }))

/**
 * The run of a compiled question set over a prompt, by the rules of `compileRunSpec`: one draw, no thought, no
 * output limit, the default deadline; `input_too_large` when the prompt and the set are over the decision limit.
 */
export const internalDecisionSpec = (
  set: InternalQuestionSet,
  prompt: string,
  inputDigest: string
): Result.Result<RunSpec, InputTooLarge> =>
  Result.map(
    checkInputEstimate("decision", inputEstimate({ promptBytes: promptBytes(prompt), contractBytes: set.contractBytes })),
    (inputTokens): RunSpec => ({
      kind: "decision",
      plan: set.plan,
      prompt,
      inputDigest,
      inputTokens,
      deadlineMs: defaultDeadlineMs("decision", inputTokens),
      holdTokens: decisionHoldTokens(inputTokens, set.plan.questions.length, 1, 0, undefined),
      draws: 1,
      thinkTokens: 0,
      maxOutputTokens: undefined
    })
  )
