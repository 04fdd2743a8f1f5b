/**
 * A JSON request body's text read as a value: the content types that name JSON, and parsing no deeper than
 * `MaxJsonDepth`. A body nested more than `MaxJsonDepth` levels of arrays and objects (the outermost one is level 1)
 * is refused like any body that does not match its route's schema, so no later step (decoding, digests, rendering)
 * ever walks a value deep enough to exhaust the stack; the depth is measured without recursion.
 */
import { Predicate } from "effect"

/** The deepest nesting of arrays and objects a JSON request body may have (docs/decisions.md, Boundary). */
export const MaxJsonDepth = 256

// RFC 6838 restricted-name characters of a subtype, before the `+json` structured-syntax suffix.
const StructuredJson = /^application\/[a-z0-9!#$&^_.+-]+\+json$/

/**
 * Whether a Content-Type names JSON: `application/json` or an `application/<subtype>+json` type, case-insensitive,
 * parameters (`; charset=utf-8`) allowed.
 */
export const isJsonContentType = (value: string | undefined): boolean => {
  if (value === undefined) return false
  const essence = value.split(";", 1)[0]!.trim().toLowerCase()
  return essence === "application/json" || StructuredJson.test(essence)
}

/**
 * The top-level field under which a value nests deeper than `limit` levels ("" when the value itself is an array
 * that does), or undefined when it does not. Iterative: an explicit stack, so any depth is safe to measure; it stops
 * at the first level past the limit.
 */
export const tooDeepUnder = (value: unknown, limit: number = MaxJsonDepth): string | undefined => {
  if (!Predicate.isObjectOrArray(value)) return undefined
  // Each node waiting with its depth and the top-level field it is under (the value's own children name theirs).
  const nodes: Array<object> = [value]
  const depths: Array<number> = [1]
  const fields: Array<string> = [""]
  while (nodes.length > 0) {
    const node = nodes.pop()!
    const depth = depths.pop()!
    const field = fields.pop()!
    if (depth > limit) return field
    const children: ReadonlyArray<unknown> = Array.isArray(node) ? node : Object.values(node)
    const names = depth === 1 && !Array.isArray(node) ? Object.keys(node) : undefined
    for (let index = 0; index < children.length; index++) {
      const child = children[index]
      if (Predicate.isObjectOrArray(child)) {
        nodes.push(child)
        depths.push(depth + 1)
        fields.push(names === undefined ? field : names[index]!)
      }
    }
  }
  return undefined
}

/** What reading a body's text as JSON gave: the value, or the problem in words and its kind. */
export type JsonBodyResult =
  | { readonly _tag: "Parsed"; readonly value: unknown }
  | { readonly _tag: "Malformed"; readonly detail: string }
  | { readonly _tag: "TooDeep"; readonly detail: string }

/**
 * Parses a request body. An empty (or blank) text is malformed with serde's EOF wording; JSON.parse itself is
 * iterative in V8, so parsing first and measuring after is safe for any nesting the size limit lets through.
 */
export const parseJsonBody = (text: string, limit: number = MaxJsonDepth): JsonBodyResult => {
  if (text.trim() === "") return { _tag: "Malformed", detail: "EOF while parsing a value at line 1 column 0" }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return { _tag: "Malformed", detail: error instanceof Error ? error.message : String(error) }
  }
  const field = tooDeepUnder(value, limit)
  if (field === undefined) return { _tag: "Parsed", value }
  const where = field === "" ? "the body" : `"${field}"`
  return { _tag: "TooDeep", detail: `${where} nests deeper than ${limit} levels of arrays and objects` }
}
