/**
 * Whether every `$ref` and `$dynamicRef` of a schema resolves inside the document, found without compiling it: the
 * reference resolves against its base URI (RFC 3986), the part before the fragment must name the document or one of
 * its `$id` resources, and the fragment must be empty, a JSON Pointer (RFC 6901) that lands on a schema (an object or
 * a boolean) from that resource's root, or one of its `$anchor`/`$dynamicAnchor` names. Nothing is fetched. Each
 * reference is resolved once, never followed further, so a chain or a cycle of references costs one step a link.
 */
import { quoted, type SchemaIndex } from "./SchemaWalk.js"

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

const isSchema = (value: unknown): boolean =>
  typeof value === "boolean" || (typeof value === "object" && value !== null && !Array.isArray(value))

/** Whether `ref`, resolved against `base`, lands on a schema of the document. */
const resolves = (index: SchemaIndex, ref: string, base: string): boolean => {
  let url: URL
  let fragment: string
  try {
    url = new URL(ref, base)
    fragment = decodeURIComponent(url.hash.slice(1))
  } catch {
    return false
  }
  url.hash = ""
  const resource = index.resources.get(url.href)
  if (resource === undefined) return false
  if (fragment === "") return true
  if (fragment.startsWith("/")) return isSchema(evaluatePointer(resource, fragment))
  return index.anchors.has(`${url.href}#${fragment}`)
}

/** Undefined when every reference of the document resolves inside it, else which one does not. */
export const unresolvedReference = (index: SchemaIndex): string | undefined => {
  for (const { base, ref } of index.references) {
    if (!resolves(index, ref, base)) return `$ref ${quoted(ref)} does not resolve inside the schema`
  }
  return undefined
}
