/**
 * The `schema` of a verdict run: a JSON Schema (draft 2020-12) object, checked with a real validator (Ajv 2020) at
 * the request, so a caller learns of a broken schema before anything is admitted. Bounds chosen here: a `$schema`,
 * when given, must name draft 2020-12; references must resolve inside the document (nothing is fetched); the
 * document nests at most 32 levels of objects and arrays, checked before the validator sees it (the validator
 * recurses, the check does not).
 */
import Ajv2020 from "ajv/dist/2020.js"
import { Result } from "effect"
import { InvalidVerdictSchema } from "../../schema/Errors.js"

const Draft202012 = "https://json-schema.org/draft/2020-12/schema"
const MaxDepth = 32

const isContainer = (value: unknown): value is object => typeof value === "object" && value !== null

/**
 * Whether a value nests more than `limit` levels of objects and arrays (the outermost is level 1). Iterative with an
 * explicit stack and stopping at the first level past the limit, so any depth is measured safely and cheaply.
 */
const nestsDeeperThan = (value: unknown, limit: number): boolean => {
  if (!isContainer(value)) return false
  const nodes: Array<object> = [value]
  const depths: Array<number> = [1]
  while (nodes.length > 0) {
    const node = nodes.pop()!
    const depth = depths.pop()!
    if (depth > limit) return true
    for (const child of Object.values(node)) {
      if (isContainer(child)) {
        nodes.push(child)
        depths.push(depth + 1)
      }
    }
  }
  return false
}

const invalid = (message: string) => Result.fail(new InvalidVerdictSchema({ message }))

/** The schema when it is an acceptable JSON Schema, else `invalid_verdict_schema` saying why. */
export const checkVerdictSchema = (schema: unknown): Result.Result<Record<string, unknown>, InvalidVerdictSchema> => {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    return invalid("a verdict run needs `schema`, a JSON Schema object")
  }
  const record = schema as Record<string, unknown>
  if (record.$schema !== undefined && record.$schema !== Draft202012 && record.$schema !== `${Draft202012}#`) {
    return invalid(`$schema must be ${Draft202012}`)
  }
  if (nestsDeeperThan(record, MaxDepth)) return invalid(`the schema nests more than ${MaxDepth} levels`)
  const ajv = new Ajv2020.default({ strict: false, allErrors: false, validateSchema: true })
  try {
    if (!ajv.validateSchema(record)) {
      return invalid(`not a valid JSON Schema: ${ajv.errorsText(ajv.errors, { dataVar: "schema" })}`)
    }
    ajv.compile(record)
  } catch (error) {
    return invalid(`not a usable JSON Schema: ${error instanceof Error ? error.message : String(error)}`)
  }
  return Result.succeed(record)
}
