/**
 * Compiles a decision's wire question set into a `DecisionPlan`, refusing anything wrong with one
 * `invalid_decision_questions` whose message names the question and the rule. Checks run in this order: the
 * count; then each question in its given order (id, type, instructions, criteria, alone); then each question's
 * references (depends_on, ask_if, internal conditions); then cycles. Limits chosen here (the spec fixes only the
 * count): a question id is 1 to 64 characters of `[A-Za-z0-9_.:-]`; instructions are 1 to 16,384 characters and
 * not only whitespace. Repeated `depends_on` entries count once.
 */
import { Result } from "effect"
import { InvalidDecisionQuestions } from "../../schema/Errors.js"
import type { Question } from "../../schema/RunsApi.js"
import { optionsOf } from "./Criteria.js"
import { stageQuestions } from "./DecisionPlan.js"
import type { QuestionOption, QuestionType } from "../providers/ModelProvider.js"
import type { Condition, DecisionPlan, ProbabilityAtLeastCondition, UnstagedQuestion } from "./DecisionPlan.js"

/** A question as the route's schema (`RunsApi.Question`) decodes it from `POST /v1/runs`. */
export type WireQuestion = typeof Question.Type

/** Plan-building options for internal callers (the router); never filled from a request body. */
export interface CompileOptions {
  /** Extra conditions by question id; each condition's question joins that question's dependencies. */
  readonly internalConditions?: Readonly<Record<string, ReadonlyArray<ProbabilityAtLeastCondition>>> | undefined
}

/** Fewest questions in a decision (spec, Limits). */
export const MIN_QUESTIONS = 1
/** Most questions in a decision (spec, Limits). */
export const MAX_QUESTIONS = 64
/** Accepted question ids: 1 to 64 characters of `[A-Za-z0-9_.:-]`. */
export const QUESTION_ID_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/
/** Longest question instructions, in UTF-16 code units. */
export const MAX_INSTRUCTIONS_LENGTH = 16_384

const QUESTION_TYPES: ReadonlyArray<QuestionType> = ["noul", "choice", "score"]

interface Shaped {
  readonly id: string
  readonly wire: WireQuestion
  readonly type: QuestionType
  readonly options: ReadonlyArray<QuestionOption>
}

const quote = (text: string): string => JSON.stringify(text)

const shape = (id: string, wire: WireQuestion): Result.Result<Shaped, string> => {
  if (!QUESTION_ID_PATTERN.test(id)) {
    return Result.fail(`question id ${quote(id)} must be 1 to 64 characters of A-Z a-z 0-9 _ . : -`)
  }
  const type = QUESTION_TYPES.find((known) => known === wire.type)
  if (type === undefined) {
    return Result.fail(`question ${quote(id)}: unknown type ${quote(String(wire.type))} (expected noul, choice or score)`)
  }
  if (typeof wire.instructions !== "string" || wire.instructions.trim().length === 0) {
    return Result.fail(`question ${quote(id)}: instructions must not be empty`)
  }
  if (wire.instructions.length > MAX_INSTRUCTIONS_LENGTH) {
    return Result.fail(
      `question ${quote(id)}: instructions are ${wire.instructions.length} characters, at most ${MAX_INSTRUCTIONS_LENGTH}`
    )
  }
  if (wire.alone !== undefined && typeof wire.alone !== "boolean") {
    return Result.fail(`question ${quote(id)}: alone must be true or false`)
  }
  return Result.map(optionsOf(type, wire.criteria), (options) => ({ id, wire, type, options })).pipe(
    Result.mapError((problem) => `question ${quote(id)}: ${problem}`)
  )
}

const alternativesOf = (question: Shaped): string => question.options.map((option) => option.name).join(", ")

/** An `ask_if` entry's condition on `found` (the question it names), or what is wrong with it. */
const askIfCondition = (
  where: string,
  target: string,
  found: Shaped,
  answers: NonNullable<WireQuestion["ask_if"]>[string]
): Condition | string => {
  if (!Array.isArray(answers) || answers.length === 0) {
    return `${where}: ask_if ${quote(target)} needs at least one answer`
  }
  const wrong = answers.find((answer) => !found.options.some((option) => option.name === answer))
  if (wrong !== undefined) {
    return `${where}: ask_if ${quote(target)} lists ${quote(String(wrong))}, which is not an answer of ${quote(target)} ` +
      `(expected one of ${alternativesOf(found)})`
  }
  return { kind: "answer_in", question: target, answers: [...answers] }
}

/** What is wrong with a service condition on `found` (the question it names), if anything. */
const internalConditionProblem = (
  where: string,
  condition: ProbabilityAtLeastCondition,
  found: Shaped
): string | undefined =>
  !found.options.some((option) => option.name === condition.alternative)
    ? `${where}: condition on ${quote(condition.question)} names ${quote(condition.alternative)}, which is not ` +
      `an answer of it (expected one of ${alternativesOf(found)})`
    : !(condition.min >= 0 && condition.min <= 1)
    ? `${where}: condition minimum ${condition.min} is outside 0 to 1`
    : undefined

const references = (
  question: Shaped,
  byId: ReadonlyMap<string, Shaped>,
  internal: ReadonlyArray<ProbabilityAtLeastCondition>
): Result.Result<UnstagedQuestion, string> => {
  const where = `question ${quote(question.id)}`
  const named = (field: string, target: string): Shaped | string => {
    if (target === question.id) return `${where}: ${field} names the question itself`
    return byId.get(target) ?? `${where}: ${field} names unknown question ${quote(target)}`
  }
  const dependsOn: Array<string> = []
  const depend = (id: string) => {
    if (!dependsOn.includes(id)) dependsOn.push(id)
  }
  for (const target of question.wire.depends_on ?? []) {
    const found = named("depends_on", target)
    if (typeof found === "string") return Result.fail(found)
    depend(target)
  }
  const conditions: Array<Condition> = []
  for (const [target, answers] of Object.entries(question.wire.ask_if ?? {})) {
    const found = named("ask_if", target)
    if (typeof found === "string") return Result.fail(found)
    const condition = askIfCondition(where, target, found, answers)
    if (typeof condition === "string") return Result.fail(condition)
    conditions.push(condition)
    depend(target)
  }
  for (const condition of internal) {
    const found = named("condition", condition.question)
    if (typeof found === "string") return Result.fail(found)
    const problem = internalConditionProblem(where, condition, found)
    if (problem !== undefined) return Result.fail(problem)
    conditions.push(condition)
    depend(condition.question)
  }
  return Result.succeed({
    id: question.id,
    type: question.type,
    instructions: question.wire.instructions,
    options: question.options,
    dependsOn,
    conditions,
    alone: question.wire.alone === true
  })
}

/** Validates a question set and compiles it into stages, or says exactly what is wrong with it. */
export const compileQuestions = (
  questions: Readonly<Record<string, WireQuestion>>,
  options: CompileOptions = {}
): Result.Result<DecisionPlan, InvalidDecisionQuestions> => {
  const fail = (message: string) => Result.fail(new InvalidDecisionQuestions({ message }))
  const entries = Object.entries(questions)
  if (entries.length < MIN_QUESTIONS || entries.length > MAX_QUESTIONS) {
    return fail(`a decision needs ${MIN_QUESTIONS} to ${MAX_QUESTIONS} questions, got ${entries.length}`)
  }
  const shaped: Array<Shaped> = []
  for (const [id, wire] of entries) {
    const result = shape(id, wire)
    if (Result.isFailure(result)) return fail(result.failure)
    shaped.push(result.success)
  }
  const byId = new Map(shaped.map((question) => [question.id, question]))
  const internal = new Map(Object.entries(options.internalConditions ?? {}))
  const stray = [...internal.keys()].find((id) => !byId.has(id))
  if (stray !== undefined) return fail(`a condition is attached to unknown question ${quote(stray)}`)
  const unstaged: Array<UnstagedQuestion> = []
  for (const question of shaped) {
    const result = references(question, byId, internal.get(question.id) ?? [])
    if (Result.isFailure(result)) return fail(result.failure)
    unstaged.push(result.success)
  }
  return Result.mapError(stageQuestions(unstaged), (message) => new InvalidDecisionQuestions({ message }))
}
