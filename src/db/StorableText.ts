/**
 * Text PostgreSQL can store: a `text` or `json` value holds no NUL character and no lone UTF-16 surrogate (a JSON
 * `"\ud800"` escape decodes to one; UTF-8 cannot carry it). The boundary refuses such text in a body, a query string
 * or a path before anything is stored or a model is called, so a hostile string never reaches the database as a
 * data error (docs/decisions.md, Boundary). The walk over a parsed body is iterative and linear in its size.
 */

interface WellFormed {
  readonly isWellFormed: () => boolean
}

/** What is wrong with a string PostgreSQL cannot store, or undefined when it can be stored. */
export const unstorableReason = (text: string): string | undefined => {
  if (text.includes("\u0000")) return "contains a NUL character (\\u0000)"
  if (!(text as unknown as WellFormed).isWellFormed()) return "contains a lone UTF-16 surrogate"
  return undefined
}

const childrenOf = (node: object): ReadonlyArray<readonly [string, unknown]> =>
  Array.isArray(node)
    ? node.map((item, index) => [`[${index}]`, item] as const)
    : Object.keys(node).map((key) => [key, (node as Record<string, unknown>)[key]] as const)

/** Whether every string of a parsed JSON value (object keys included) can be stored; no allocation per string. */
const allStorable = (value: unknown): boolean => {
  const nodes: Array<unknown> = [value]
  while (nodes.length > 0) {
    const node = nodes.pop()
    if (typeof node === "string") {
      if (unstorableReason(node) !== undefined) return false
    } else if (Array.isArray(node)) {
      for (const item of node) nodes.push(item)
    } else if (typeof node === "object" && node !== null) {
      for (const key of Object.keys(node)) {
        if (unstorableReason(key) !== undefined) return false
        nodes.push((node as Record<string, unknown>)[key])
      }
    }
  }
  return true
}

/** Where the first unstorable string is and why (the slow walk, run only once a body is known to hold one). */
const locate = (value: unknown): string | undefined => {
  const nodes: Array<readonly [string, unknown]> = [["", value]]
  while (nodes.length > 0) {
    const [path, node] = nodes.pop()!
    if (typeof node === "string") {
      const reason = unstorableReason(node)
      if (reason !== undefined) return `${path === "" ? "the body" : path} ${reason}`
    } else if (typeof node === "object" && node !== null) {
      const children = childrenOf(node)
      for (let index = children.length - 1; index >= 0; index--) {
        const [key, child] = children[index]!
        const keyReason = Array.isArray(node) ? undefined : unstorableReason(key)
        if (keyReason !== undefined) return `${path === "" ? "a field name" : `a field name under ${path}`} ${keyReason}`
        nodes.push([Array.isArray(node) ? `${path}${key}` : path === "" ? key : `${path}.${key}`, child])
      }
    }
  }
  return undefined
}

/** The first unstorable text in a parsed JSON value, as `<where> <reason>`, or undefined when all of it is storable. */
export const unstorableIn = (value: unknown): string | undefined => (allStorable(value) ? undefined : locate(value))

/** A JSON escape that decodes to NUL or to a surrogate (a pair of them may be well formed: the walk decides). */
const SuspectEscape = /\\u(?:0000|[dD][89a-fA-F])/

/**
 * The first unstorable text in the value parsed from a JSON text, as `unstorableIn` says. JSON.parse makes an
 * unstorable string only of an unstorable character in the text itself or of an escape decoding to NUL or a surrogate,
 * so a text with neither, found by native scans of the text, skips the walk over the value.
 */
export const unstorableInJson = (text: string, value: unknown): string | undefined =>
  unstorableReason(text) === undefined && !SuspectEscape.test(text) ? undefined : unstorableIn(value)
