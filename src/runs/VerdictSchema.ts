/**
 * The `schema` of a verdict run: a JSON Schema (draft 2020-12) object, checked at the request, so a caller learns of a
 * broken schema before anything is admitted. Checking is bounded work whatever the body (decisions.md, Verdict runs):
 * its subschemas nest at most 32 levels of objects and arrays, and it holds at most 2,000 schema nodes and 256
 * patterns, measured first by one pass that stops at the first bound passed (SchemaWalk); only then is it validated as
 * data against the draft 2020-12 meta-schema by one validator per process (Ajv 2020, the meta-schema compiled once;
 * the caller's schema is never compiled), each pattern is parsed once per process (SchemaPatterns), and each reference
 * must resolve inside the document (SchemaRefs; nothing is fetched). A `$schema`, when given, must name draft 2020-12.
 */
import Ajv2020 from "ajv/dist/2020.js"
import { Result } from "effect"
import { InvalidVerdictSchema } from "../../schema/Errors.js"
import { patternProblem } from "./SchemaPatterns.js"
import { unresolvedReference } from "./SchemaRefs.js"
import { quoted, walkSchema } from "./SchemaWalk.js"

const Draft202012 = "https://json-schema.org/draft/2020-12/schema"
const MaxDepth = 32
const MaxSchemaNodes = 2_000
const MaxPatterns = 256

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
