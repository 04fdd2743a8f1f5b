/**
 * The `schema` of a verdict run: a JSON Schema (draft 2020-12) object, checked at the request, so a caller learns of a
 * broken schema before anything is admitted. Checking is bounded work whatever the body (decisions.md, Verdict runs):
 * its subschemas nest at most 32 levels of objects and arrays, and it holds at most 2,000 schema nodes and 256
 * patterns, measured first by one pass that stops at the first bound passed (SchemaWalk); only then is it validated as
 * data against the draft 2020-12 meta-schema by one validator per process (Ajv 2020, the meta-schema compiled once;
 * the caller's schema is never compiled), each pattern must build as the validator builds it (`new RegExp(text, "u")`,
 * which only parses it, linear in its length), and each reference must resolve inside the document (SchemaWalk; nothing
 * is fetched). A `$schema`, when given, must name draft 2020-12. Each pattern's verdict is kept in a cache bounded in
 * entries and in characters (the oldest entry goes first), so a repeated pattern costs a lookup.
 */
import Ajv2020 from "ajv/dist/2020.js"
import { Result } from "effect"
import { InvalidVerdictSchema } from "../../schema/Errors.js"
import { quoted, unresolvedReference, walkSchema } from "./SchemaWalk.js"

const Draft202012 = "https://json-schema.org/draft/2020-12/schema"
const MaxDepth = 32
const MaxSchemaNodes = 2_000
const MaxPatterns = 256

/** At most this many patterns are remembered, and at most this many characters of their texts. */
const MaxCachedPatterns = 4_096
const MaxCachedCharacters = 1_048_576

/** A pattern's text to undefined when it is valid, else the parser's reason (without the pattern, which may be long). */
const verdicts = new Map<string, string | undefined>()
let cachedCharacters = 0

const remember = (text: string, verdict: string | undefined): void => {
  if (text.length > MaxCachedCharacters) return
  while (verdicts.size >= MaxCachedPatterns || cachedCharacters + text.length > MaxCachedCharacters) {
    const oldest = verdicts.keys().next()
    if (oldest.done === true) break
    verdicts.delete(oldest.value)
    cachedCharacters -= oldest.value.length
  }
  verdicts.set(text, verdict)
  cachedCharacters += text.length
}

const parse = (text: string): string | undefined => {
  try {
    new RegExp(text, "u")
    return undefined
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    const prefix = `Invalid regular expression: /${text}/u: `
    return message.startsWith(prefix) ? message.slice(prefix.length) : "not a regular expression"
  }
}

/** Undefined when `text` is a valid pattern (Unicode mode, as the validator builds it), else why not. */
export const patternProblem = (text: string): string | undefined => {
  if (verdicts.has(text)) return verdicts.get(text)
  const verdict = parse(text)
  remember(text, verdict)
  return verdict
}

/** How many patterns and characters the cache holds (for tests of its bounds). */
export const patternCacheSize = (): { readonly entries: number; readonly characters: number } => ({
  entries: verdicts.size,
  characters: cachedCharacters
})

/**
 * The one validator of the process, holding the draft 2020-12 meta-schema, which it compiles once, as the module loads,
 * and keeps. Formats are not checked (`regex` is the pattern check's, the URI formats the reference check's), so its
 * notices about them stay quiet.
 */
const ajv = new Ajv2020.default({ strict: false, allErrors: false, logger: false })
const metaSchema = ajv.getSchema(Draft202012)!

/** The validator's account of an error names paths in the caller's schema, so it is cut to a bounded length. */
const cut = (text: string): string => (text.length > 300 ? `${text.slice(0, 300)}...` : text)

const invalid = (message: string) => Result.fail(new InvalidVerdictSchema({ message }))

/** The first problem a document within the bounds has as a draft 2020-12 schema, or undefined when it has none. */
const schemaProblem = (record: Record<string, unknown>): string | undefined => {
  const walk = walkSchema(record, { nodes: MaxSchemaNodes, patterns: MaxPatterns, depth: MaxDepth })
  if (walk._tag === "TooDeep") return `the schema nests more than ${MaxDepth} levels`
  if (walk._tag === "TooManyNodes") return `the schema has more than ${MaxSchemaNodes.toLocaleString("en-US")} schema nodes`
  if (walk._tag === "TooManyPatterns") return `the schema has more than ${MaxPatterns} patterns`
  if (!metaSchema(record)) return `not a valid JSON Schema: ${cut(ajv.errorsText(metaSchema.errors, { dataVar: "schema" }))}`
  for (const pattern of walk.index.patterns) {
    const problem = patternProblem(pattern)
    if (problem !== undefined) return `not a usable JSON Schema: pattern ${quoted(pattern)}: ${problem}`
  }
  if (walk.index.problem !== undefined) return `not a usable JSON Schema: ${walk.index.problem}`
  const reference = unresolvedReference(walk.index)
  return reference === undefined ? undefined : `not a usable JSON Schema: ${reference}`
}

/** The schema when it is an acceptable JSON Schema, else `invalid_verdict_schema` saying why. */
export const checkVerdictSchema = (schema: unknown): Result.Result<Record<string, unknown>, InvalidVerdictSchema> => {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    return invalid("a verdict run needs `schema`, a JSON Schema object")
  }
  const record = schema as Record<string, unknown>
  if (record.$schema !== undefined && record.$schema !== Draft202012 && record.$schema !== `${Draft202012}#`) {
    return invalid(`$schema must be ${Draft202012}`)
  }
  const problem = schemaProblem(record)
  return problem === undefined ? Result.succeed(record) : invalid(problem)
}
