/**
 * Reading the router's JSON data files at start-up and decoding them with a schema. Every problem is rendered for
 * an operator as `file: model "id": field "a.b[0]": message`: the file as given, the item of the file's main list
 * (a model, a task type) named by its id, and the field path inside it.
 */
import { Effect, Either, ParseResult, Schema } from "effect"
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

/** Decodes a parsed file with `schema`, failing with every located issue (the first one per field). */
export const decodeDataFile = <A, I>(
  schema: Schema.Schema<A, I, never>,
  file: string,
  json: unknown,
  items: ItemList
): Either.Either<A, string> =>
  Either.mapLeft(Schema.decodeUnknownEither(schema, { errors: "all" })(json), (error) => {
    const seen = new Set<string>()
    const issues: Array<string> = []
    for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
      const key = fieldPath(issue.path)
      if (seen.has(key)) continue
      seen.add(key)
      issues.push(locateIssue(file, json, items, issue.path, issue.message))
    }
    return joinIssues(issues)
  })
