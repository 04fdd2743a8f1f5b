/**
 * Compiles a decision's wire question set into a `DecisionPlan`, refusing anything wrong with one
 * `invalid_decision_questions` whose message names the question and the rule. Checks run in this order: the
 * count; then each question in its given order (id, type, instructions, criteria, alone); then each question's
 * references (depends_on, ask_if, internal conditions); then cycles. Repeated `depends_on` entries count once.
 *
 * The spec fixes the counts: 1 to 64 questions, 2 to 20 alternatives of a `choice` or `score` question. Limits
 * chosen here: a question id is 1 to 64 characters of `[A-Za-z0-9_.:-]`; instructions are 1 to 16,384 characters
 * (UTF-16 code units, as every length here) and not only whitespace; an option or level name is 1 to 128 characters
 * with no control characters and no surrounding whitespace, distinct within its question; a description is a string
 * of at most 4,096 characters, or null. Score levels given as an object keep the object's order, which JSON parsing
 * in JavaScript cannot keep for integer-like keys ("1", "20"): those come first in numeric order. Levels that are all
 * integer-like are therefore read in numeric order; a mix of integer-like and other names is refused.
 */
import { Predicate, Result } from "effect"
import { InvalidDecisionQuestions } from "../../schema/Errors.js"
import type { Question } from "../../schema/RunsApi.js"
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

const MIN_QUESTIONS = 1
const MAX_QUESTIONS = 64
const QUESTION_ID_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/
const MAX_INSTRUCTIONS_LENGTH = 16_384
const MIN_OPTIONS = 2
const MAX_OPTIONS = 20
const MAX_OPTION_NAME_LENGTH = 128
const MAX_DESCRIPTION_LENGTH = 4_096

const QUESTION_TYPES: ReadonlyArray<QuestionType> = ["noul", "choice", "score"]

const CONTROL = /[\u0000-\u001f\u007f]/
const INTEGER_LIKE = /^(0|[1-9][0-9]*)$/

const checkName = (noun: string, name: string): string | null => {
  if (name.length === 0) return `${noun} names must not be empty`
  if (name.length > MAX_OPTION_NAME_LENGTH) {
    return `${noun} name "${name.slice(0, 32)}..." is longer than ${MAX_OPTION_NAME_LENGTH} characters`
  }
  if (CONTROL.test(name)) return `${noun} name ${JSON.stringify(name)} contains a control character`
  if (name.trim() !== name) return `${noun} name ${JSON.stringify(name)} has leading or trailing whitespace`
  return null
}

const readDescription = (noun: string, name: string, value: unknown): Result.Result<string | null, string> => {
  if (value === null) return Result.succeed(null)
  if (typeof value !== "string") {
    return Result.fail(`the description of ${noun} ${JSON.stringify(name)} must be a string or null`)
  }
  if (value.length > MAX_DESCRIPTION_LENGTH) {
    return Result.fail(
      `the description of ${noun} ${JSON.stringify(name)} is longer than ${MAX_DESCRIPTION_LENGTH} characters`
    )
  }
  return Result.succeed(value)
}

const readEntries = (
  type: "choice" | "score",
  noun: string,
  entries: ReadonlyArray<readonly [string, unknown]>
): Result.Result<ReadonlyArray<QuestionOption>, string> => {
  if (entries.length < MIN_OPTIONS || entries.length > MAX_OPTIONS) {
    return Result.fail(`${type} needs ${MIN_OPTIONS} to ${MAX_OPTIONS} ${noun}s, got ${entries.length}`)
  }
  const seen = new Set<string>()
  const options: Array<QuestionOption> = []
  for (const [name, value] of entries) {
    const bad = checkName(noun, name)
    if (bad !== null) return Result.fail(bad)
    if (seen.has(name)) return Result.fail(`${noun} ${JSON.stringify(name)} is listed twice`)
    seen.add(name)
    const description = readDescription(noun, name, value)
    if (Result.isFailure(description)) return Result.fail(description.failure)
    options.push({ name, description: description.success })
  }
  return Result.succeed(options)
}

const noulOptions = (criteria: unknown): Result.Result<ReadonlyArray<QuestionOption>, string> => {
  if (criteria === undefined || criteria === null) {
    return Result.succeed([{ name: "yes", description: null }, { name: "no", description: null }])
  }
  if (!Predicate.isObject(criteria)) return Result.fail(`noul criteria must be an object {"true": ..., "false": ...}`)
  const unknownKey = Object.keys(criteria).find((key) => key !== "true" && key !== "false")
  if (unknownKey !== undefined) {
    return Result.fail(`noul criteria accept only the keys "true" and "false", got ${JSON.stringify(unknownKey)}`)
  }
  const yes = readDescription("criterion", "true", criteria["true"] ?? null)
  if (Result.isFailure(yes)) return Result.fail(yes.failure)
  const no = readDescription("criterion", "false", criteria["false"] ?? null)
  if (Result.isFailure(no)) return Result.fail(no.failure)
  return Result.succeed([{ name: "yes", description: yes.success }, { name: "no", description: no.success }])
}

const choiceOptions = (criteria: unknown): Result.Result<ReadonlyArray<QuestionOption>, string> =>
  Predicate.isObject(criteria)
    ? readEntries("choice", "option", Object.entries(criteria))
    : Result.fail("choice criteria must be an object of option name to description (or null)")

const scoreOptions = (criteria: unknown): Result.Result<ReadonlyArray<QuestionOption>, string> => {
  if (Array.isArray(criteria)) {
    const notString = criteria.findIndex((item) => typeof item !== "string")
    if (notString >= 0) return Result.fail(`score level ${notString} must be a string`)
    return readEntries("score", "level", (criteria as ReadonlyArray<string>).map((name) => [name, null] as const))
  }
  if (!Predicate.isObject(criteria)) {
    return Result.fail("score criteria must be an array of level names or an object of level name to description")
  }
  const keys = Object.keys(criteria)
  const integerLike = keys.filter((key) => INTEGER_LIKE.test(key))
  if (integerLike.length > 0 && integerLike.length < keys.length) {
    return Result.fail(
      `score levels given as an object cannot mix integer-like names (${JSON.stringify(integerLike[0])}) with ` +
        "others, because JSON objects do not keep their order; give the levels as an array"
    )
  }
  return readEntries("score", "level", Object.entries(criteria))
}

/** The ordered alternatives of a question of a known type, or what is wrong with its `criteria`. */
export const optionsOf = (type: QuestionType, criteria: unknown): Result.Result<ReadonlyArray<QuestionOption>, string> =>
  type === "noul" ? noulOptions(criteria) : type === "choice" ? choiceOptions(criteria) : scoreOptions(criteria)

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
