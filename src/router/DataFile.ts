/**
 * Reading the router's JSON data files at start-up and decoding them with a schema. Every problem is rendered for
 * an operator as `file: model "id": field "a.b[0]": message`: the file as given, the item of the file's main list
 * (a model, a task type) named by its id, and the field path inside it. The message names what was expected and
 * what was found (`Expected a non-negative number, actual -1`, `is missing`), so the files' checks below carry their
 * own `expected` wording.
 */
import { Effect, Formatter, Result, Schema, SchemaIssue } from "effect"
import { readFileSync } from "node:fs"

/** Names the list of a data file whose items are reported by id, e.g. `{ list: "models", noun: "model" }`. */
export interface ItemList {
  readonly list: string
  readonly noun: string
}

const MAX_REPORTED_ISSUES = 5

const describeError = (error: unknown): string => (error instanceof Error ? error.message : String(error))

const asRecord = (value: unknown): Readonly<Record<string, unknown>> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Readonly<Record<string, unknown>>)
    : undefined

const fieldPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (acc, key) => (typeof key === "number" ? `${acc}[${key}]` : acc === "" ? String(key) : `${acc}.${String(key)}`),
    ""
  )

/** Renders one located issue; `path` starts at the file's top level. */
export const locateIssue = (
  file: string,
  json: unknown,
  items: ItemList,
  path: ReadonlyArray<PropertyKey>,
  message: string
): string => {
  const [first, index, ...rest] = path
  if (first === items.list && typeof index === "number") {
    const list = asRecord(json)?.[items.list]
    const id = Array.isArray(list) ? asRecord(list[index])?.["id"] : undefined
    const item = typeof id === "string" ? `${items.noun} "${id}"` : `${items.noun} #${index + 1}`
    return rest.length === 0
      ? `${file}: ${item}: ${message}`
      : `${file}: ${item}: field "${fieldPath(rest)}": ${message}`
  }
  return path.length === 0 ? `${file}: ${message}` : `${file}: field "${fieldPath(path)}": ${message}`
}

/** Joins located issues into one message, listing the first few and counting the rest. */
export const joinIssues = (issues: ReadonlyArray<string>): string => {
  const shown = issues.slice(0, MAX_REPORTED_ISSUES).join("; ")
  const more = issues.length - MAX_REPORTED_ISSUES
  return more > 0 ? `${shown}; and ${more} more problem${more === 1 ? "" : "s"}` : shown
}

/** A number of at least 0; its failure reads `Expected a non-negative number, actual -1`. */
export const NonNegative = Schema.Number.check(Schema.isGreaterThanOrEqualTo(0, { expected: "a non-negative number" }))

/** A whole number of at least 0. */
export const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0, { expected: "a non-negative number" }))

/** A number above 0. */
export const Positive = Schema.Number.check(Schema.isGreaterThan(0, { expected: "a positive number" }))

/** A whole number of at least `minimum`. */
export const IntAtLeast = (minimum: number) =>
  Schema.Int.check(Schema.isGreaterThanOrEqualTo(minimum, { expected: `a number greater than or equal to ${minimum}` }))

/** A number from `minimum` to `maximum`, both included. */
export const Between = (minimum: number, maximum: number) =>
  Schema.Number.check(
    Schema.isBetween({ minimum, maximum }, { expected: `a number between ${minimum} and ${maximum}` })
  )

/** A string of at least one character. */
export const NonEmptyString = Schema.String.check(Schema.isMinLength(1, { expected: "a non empty string" }))

/** A list of `item` with at least `minimum` items and, when given, at most `maximum`. */
export const ArrayOf = <S extends Schema.Top>(item: S, minimum: number, maximum?: number) => {
  const atLeast = Schema.Array(item).check(
    Schema.isMinLength(minimum, { expected: `an array of at least ${minimum} item(s)` })
  )
  return maximum === undefined
    ? atLeast
    : atLeast.check(Schema.isMaxLength(maximum, { expected: `an array of at most ${maximum} item(s)` }))
}

/** Reads and parses a JSON file; the failure is a message naming the file. */
export const readJsonFile = (file: string): Effect.Effect<unknown, string> =>
  Effect.try({
    try: () => readFileSync(file, "utf8"),
    catch: (error) => `${file}: cannot read the file (${describeError(error)})`
  }).pipe(
    Effect.flatMap((text) =>
      Effect.try({
        try: (): unknown => JSON.parse(text),
        catch: (error) => `${file}: not valid JSON (${describeError(error)})`
      })
    )
  )

/**
 * The message of a failed check: its own `message`, else `Expected <its expected annotation>, actual <input>`, as in
 * `Expected a positive number, actual 0`.
 */
const checkMessage = (issue: SchemaIssue.Filter): string | undefined => {
  const message = SchemaIssue.defaultCheckHook(issue)
  if (message !== undefined) return message
  const expected = issue.filter.annotations?.expected
  return typeof expected === "string" ? `Expected ${expected}, actual ${Formatter.format(issue.input)}` : undefined
}

/** The message of a leaf issue: `is missing`, or `Expected number, actual "x"`. */
const leafMessage = (issue: SchemaIssue.Leaf): string =>
  issue._tag === "MissingKey" ? "is missing" : SchemaIssue.defaultLeafHook(issue).replace(/, got /, ", actual ")

/** An issue's message and the path of the field it is about, from the file's top level. */
interface LocatedIssue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/**
 * Every leaf of an issue with its path. A value that matches no member of a union, and fails none of them in
 * particular (a string where a number or null is expected), is reported against the first member:
 * `Expected number, actual "high"`.
 */
const locatedIssues = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey>): Array<LocatedIssue> => {
  switch (issue._tag) {
    case "Pointer":
      return locatedIssues(issue.issue, [...path, ...issue.path])
    case "Encoding":
      return locatedIssues(issue.issue, path)
    case "Composite":
      return issue.issues.flatMap((inner) => locatedIssues(inner, path))
    case "AnyOf": {
      const first = issue.ast.types[0]
      if (issue.issues.length > 0 || first === undefined) {
        return issue.issues.flatMap((inner) => locatedIssues(inner, path))
      }
      return [{ path, message: leafMessage(new SchemaIssue.InvalidType(first, issue.input, { reportInput: true })) }]
    }
    case "Filter": {
      const message = checkMessage(issue)
      return message === undefined ? locatedIssues(issue.issue, path) : [{ path, message }]
    }
    default:
      return [{ path, message: leafMessage(issue) }]
  }
}

/** Decodes a parsed file with `schema`, failing with every located issue (the first one per field). */
export const decodeDataFile = <S extends Schema.ConstraintDecoder<unknown>>(
  schema: S,
  file: string,
  json: unknown,
  items: ItemList
): Result.Result<S["Type"], string> =>
  Result.mapError(Schema.decodeUnknownResult(schema)(json, { errors: "all", reportInput: true }), (error) => {
    const seen = new Set<string>()
    const issues: Array<string> = []
    for (const { message, path } of locatedIssues(error.issue, [])) {
      const key = fieldPath(path)
      if (seen.has(key)) continue
      seen.add(key)
      issues.push(locateIssue(file, json, items, path, message))
    }
    return joinIssues(issues)
  })
