/**
 * One bounded pass over the schema positions of a JSON Schema (draft 2020-12) document: the subschemas the applicator,
 * unevaluated, content and core vocabularies (and the legacy `definitions`/`dependencies` the meta-schema still
 * describes) hold. It measures how deep they nest, counts the schema nodes (the root and every value in a schema
 * position, objects and booleans alike, as the meta-schema validates each) and the patterns (`pattern` values and
 * `patternProperties` names), and stops at the first one past its bound, so its work is bounded by the bounds and by
 * the keys of the objects it enters (each looked at once), never by the rest of the document. Values that are not
 * schemas (`enum`, `const`, `default`, `examples`, unknown keywords) are never entered: nothing of the check recurses
 * into them, and the request body's own nesting limit bounds them. It also gathers each resource's base URI (`$id`),
 * its anchors, and every `$ref` and `$dynamicRef`, which must then resolve inside the document (`unresolvedReference`),
 * found without compiling it: against its base URI (RFC 3986), the part before the fragment names the document or one
 * of its `$id` resources, and the fragment is empty, a JSON Pointer (RFC 6901) that lands on a schema from that
 * resource's root, or one of its anchors. Nothing is fetched; each reference is resolved once, never followed further.
 */
import { Predicate } from "effect"

/** How a keyword holds subschemas: one (1), an array of them (2), or a map of names to them (3). */
const SchemaPositions: ReadonlyMap<string, 1 | 2 | 3> = new Map([
  ...[
    "items",
    "contains",
    "additionalProperties",
    "propertyNames",
    "if",
    "then",
    "else",
    "not",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema"
  ].map((keyword) => [keyword, 1] as const),
  ...["prefixItems", "allOf", "anyOf", "oneOf"].map((keyword) => [keyword, 2] as const),
  // `dependencies` values may also be string arrays, which are skipped.
  ...["properties", "patternProperties", "dependentSchemas", "$defs", "definitions", "dependencies"].map((keyword) =>
    [keyword, 3] as const
  )
])

/** The base URI of a document without `$id`; relative references resolve against it. */
export const DocumentBase = "arbiter-verdict:/schema"

/** A `$ref` or `$dynamicRef` and the base URI it resolves against. */
export interface SchemaReference {
  readonly ref: string
  readonly base: string
}

/** What the pass found in a document within the bounds. */
export interface SchemaIndex {
  readonly nodes: number
  readonly patterns: ReadonlyArray<string>
  /** Each resource's base URI (no fragment) to its root, or a problem with an `$id`. */
  readonly resources: Map<string, object>
  /** `<resource URI>#<name>` of each `$anchor` and `$dynamicAnchor`. */
  readonly anchors: Set<string>
  readonly references: ReadonlyArray<SchemaReference>
  readonly problem: string | undefined
}

export type SchemaWalk =
  | { readonly _tag: "Within"; readonly index: SchemaIndex }
  | { readonly _tag: "TooManyNodes" }
  | { readonly _tag: "TooManyPatterns" }
  | { readonly _tag: "TooDeep" }

interface Pending {
  readonly node: Record<string, unknown>
  readonly base: string
  readonly depth: number
}

/** A caller's text in a message: JSON-quoted, cut to its first 64 characters. */
export const quoted = (text: string): string => JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}...` : text)

const has = (record: Record<string, unknown>, key: string): boolean => Object.hasOwn(record, key)

/**
 * Hands over the values a schema object holds in schema positions, in the order of its keys, each with the levels of
 * objects and arrays it lies below the object (1 under a keyword, 2 inside a keyword's array or map), until `into`
 * says stop. It looks at the object's own keys once each, so its work is the object's size, not the keyword list's.
 */
const subschemas = (node: Record<string, unknown>, into: (child: unknown, levels: number) => boolean): boolean => {
  for (const keyword of Object.keys(node)) {
    const position = SchemaPositions.get(keyword)
    if (position === undefined) continue
    const value = node[keyword]
    if (position === 1) {
      if (!into(value, 1)) return false
    } else if (position === 2) {
      if (!Array.isArray(value)) continue
      for (const child of value) if (!into(child, 2)) return false
    } else if (Predicate.isObject(value)) {
      for (const name of Object.keys(value)) if (!into((value as Record<string, unknown>)[name], 2)) return false
    }
  }
  return true
}

/** The patterns a schema object declares: its `pattern` and its `patternProperties` names. */
const declaredPatterns = (node: Record<string, unknown>, into: (pattern: string) => boolean): boolean => {
  if (has(node, "pattern") && typeof node.pattern === "string" && !into(node.pattern)) return false
  const named = has(node, "patternProperties") ? node.patternProperties : undefined
  if (Predicate.isObject(named)) {
    for (const name in named) if (has(named, name) && !into(name)) return false
  }
  return true
}

/** Registers a schema object's `$id`, anchors and references; a problem when its `$id` is unusable. */
const identify = (node: Record<string, unknown>, parentBase: string, index: Mutable): string => {
  let base = parentBase
  if (typeof node.$id === "string" && has(node, "$id")) {
    let resolved: URL
    try {
      resolved = new URL(node.$id, parentBase)
    } catch {
      index.problem ??= `$id ${quoted(node.$id)} is not a URI reference`
      return base
    }
    resolved.hash = ""
    base = resolved.href
    const known = index.resources.get(base)
    if (known !== undefined && known !== node) index.problem ??= `more than one schema has the $id ${quoted(node.$id)}`
    index.resources.set(base, node)
  }
  for (const keyword of ["$anchor", "$dynamicAnchor"] as const) {
    const name = has(node, keyword) ? node[keyword] : undefined
    if (typeof name === "string") index.anchors.add(`${base}#${name}`)
  }
  for (const keyword of ["$ref", "$dynamicRef"] as const) {
    const ref = has(node, keyword) ? node[keyword] : undefined
    if (typeof ref === "string") index.references.push({ ref, base })
  }
  return base
}

type Mutable = {
  -readonly [K in keyof SchemaIndex]: K extends "patterns" ? Array<string>
    : K extends "references" ? Array<SchemaReference>
    : SchemaIndex[K]
}

/**
 * Walks `root`'s schema positions, stopping at the first subschema, pattern or level past `limits` (`depth`: levels
 * of objects and arrays down to the deepest subschema, the root level 1).
 */
export const walkSchema = (
  root: Record<string, unknown>,
  limits: { readonly nodes: number; readonly patterns: number; readonly depth: number }
): SchemaWalk => {
  const index: Mutable = {
    nodes: 1,
    patterns: [],
    resources: new Map([[DocumentBase, root]]),
    anchors: new Set(),
    references: [],
    problem: undefined
  }
  const pending: Array<Pending> = [{ node: root, base: DocumentBase, depth: 1 }]
  let tooDeep = false
  const addPattern = (pattern: string): boolean => {
    index.patterns.push(pattern)
    return index.patterns.length <= limits.patterns
  }
  while (pending.length > 0) {
    const { base: parentBase, depth, node } = pending.pop()!
    if (!declaredPatterns(node, addPattern)) return { _tag: "TooManyPatterns" }
    const base = identify(node, parentBase, index)
    const within = subschemas(node, (child, levels) => {
      index.nodes += 1
      tooDeep = typeof child === "object" && child !== null && depth + levels > limits.depth
      if (Predicate.isObject(child)) pending.push({ node: child, base, depth: depth + levels })
      return index.nodes <= limits.nodes && !tooDeep
    })
    if (!within) return tooDeep ? { _tag: "TooDeep" } : { _tag: "TooManyNodes" }
  }
  return { _tag: "Within", index }
}

/** The value a JSON Pointer lands on from `root`, or undefined when it lands nowhere. */
const evaluatePointer = (root: unknown, pointer: string): unknown => {
  let value = root
  for (const token of pointer.split("/").slice(1)) {
    const name = token.replaceAll("~1", "/").replaceAll("~0", "~")
    if (Array.isArray(value)) {
      if (!/^(0|[1-9][0-9]*)$/.test(name) || Number(name) >= value.length) return undefined
      value = value[Number(name)]
    } else if (typeof value === "object" && value !== null && Object.hasOwn(value, name)) {
      value = (value as Record<string, unknown>)[name]
    } else {
      return undefined
    }
  }
  return value
}

const isSchema = (value: unknown): boolean => typeof value === "boolean" || Predicate.isObject(value)

/**
 * A reference that is only a fragment of characters URL parsing neither drops, escapes nor decodes: it names its own
 * base resource, and the fragment is its text after `#`, so it resolves without building a URL.
 */
const PlainFragment = /^#[A-Za-z0-9_$.~\/-]*$/

/** Whether `ref`, resolved against `base`, lands on a schema of the document. */
const resolves = (index: SchemaIndex, ref: string, base: string): boolean => {
  let resource: string
  let fragment: string
  if (PlainFragment.test(ref)) {
    resource = base
    fragment = ref.slice(1)
  } else {
    try {
      const url = new URL(ref, base)
      fragment = decodeURIComponent(url.hash.slice(1))
      url.hash = ""
      resource = url.href
    } catch {
      return false
    }
  }
  const root = index.resources.get(resource)
  if (root === undefined) return false
  if (fragment === "") return true
  if (fragment.startsWith("/")) return isSchema(evaluatePointer(root, fragment))
  return index.anchors.has(`${resource}#${fragment}`)
}

/** Undefined when every reference of the document resolves inside it, else which one does not. */
export const unresolvedReference = (index: SchemaIndex): string | undefined => {
  for (const { base, ref } of index.references) {
    if (!resolves(index, ref, base)) return `$ref ${quoted(ref)} does not resolve inside the schema`
  }
  return undefined
}
