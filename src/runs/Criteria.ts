/**
 * A question's `criteria` read into its ordered alternatives. Limits chosen here (the spec fixes only the count):
 * an option or level name is 1 to 128 characters with no control characters and no surrounding whitespace, names
 * are distinct within a question, and a description is a string of at most 4,096 characters or null.
 * Score levels given as an object keep the object's order, which JSON parsing in JavaScript cannot keep for
 * integer-like keys ("1", "20"): those come first in numeric order. Levels that are all integer-like are therefore
 * read in numeric order; a mix of integer-like and other names is refused, since its order is already lost.
 */
import { Predicate, Result } from "effect"
import type { QuestionOption, QuestionType } from "../providers/ModelProvider.js"

/** Fewest alternatives of a `choice` or `score` question (spec, Limits). */
export const MIN_OPTIONS = 2
/** Most alternatives of a `choice` or `score` question (spec, Limits). */
export const MAX_OPTIONS = 20
/** Longest option or level name, in UTF-16 code units. */
export const MAX_OPTION_NAME_LENGTH = 128
/** Longest option or level description, in UTF-16 code units. */
export const MAX_DESCRIPTION_LENGTH = 4_096

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
export const optionsOf = (type: QuestionType, criteria: unknown): Result.Result<ReadonlyArray<QuestionOption>, string> => {
  switch (type) {
    case "noul":
      return noulOptions(criteria)
    case "choice":
      return choiceOptions(criteria)
    case "score":
      return scoreOptions(criteria)
  }
}
