/**
 * The text a model reads for a run's `state` or `messages` (decisions.md, State rendering). A string state is used
 * as is. An object becomes `key: value` lines in the object's own key order, nested objects and arrays indented by
 * two spaces per level under a `key:` line, array items as `- item` lines (an object item starts on its dash
 * line: `- name: x`), empty containers as `{}` / `[]`, null as `null`, numbers as JSON prints them, and the
 * continuation lines of a multi-line string indented under their key. Messages become `role: content` turns
 * separated by a blank line. The same input always gives the same text, and any nesting renders (the walk keeps its
 * own stack rather than recursing).
 */

/** One conversation turn of a run's `messages`. */
export interface MessageTurn {
  readonly role: string
  readonly content: string
}

const INDENT = "  "

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const scalar = (value: unknown, pad: string): string => {
  if (value === null || value === undefined) return "null"
  if (typeof value === "string") return value === "" ? `""` : value.split("\n").join(`\n${pad}${INDENT}`)
  if (typeof value === "number" || typeof value === "boolean") return JSON.stringify(value)
  return JSON.stringify(value) ?? "null"
}

const isEmptyContainer = (value: unknown): string | null => {
  if (Array.isArray(value)) return value.length === 0 ? "[]" : null
  if (isRecord(value)) return Object.keys(value).length === 0 ? "{}" : null
  return null
}

const isContainer = (value: unknown): value is Readonly<Record<string, unknown>> | ReadonlyArray<unknown> =>
  Array.isArray(value) || isRecord(value)

/** One container being rendered: its entries (keys of an object, undefined for array items) and how far it got. */
interface Frame {
  readonly entries: ReadonlyArray<readonly [string | undefined, unknown]>
  readonly depth: number
  readonly pad: string
  index: number
  /** For a container that is an array item: the line its rendering starts on gets the item's dash once done. */
  readonly dash: { readonly line: number; readonly pad: string } | undefined
}

const frameOf = (
  value: Readonly<Record<string, unknown>> | ReadonlyArray<unknown>,
  depth: number,
  dash: Frame["dash"]
): Frame => ({
  entries: Array.isArray(value)
    ? value.map((item) => [undefined, item] as const)
    : Object.entries(value as Readonly<Record<string, unknown>>),
  depth,
  pad: INDENT.repeat(depth),
  index: 0,
  dash
})

// Depth-first with an explicit stack, so no nesting can exhaust the call stack; the lines are the same a recursive
// walk gives (a container's lines follow its `key:` line; an array item's first line gets its dash when it is done).
const renderContainer = (root: Readonly<Record<string, unknown>> | ReadonlyArray<unknown>, lines: Array<string>) => {
  const stack: Array<Frame> = [frameOf(root, 0, undefined)]
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!
    if (frame.index === frame.entries.length) {
      stack.pop()
      if (frame.dash !== undefined) {
        const { line, pad } = frame.dash
        lines[line] = `${pad}- ${lines[line]!.slice(pad.length + INDENT.length)}`
      }
      continue
    }
    const [key, value] = frame.entries[frame.index]!
    frame.index += 1
    const { depth, pad } = frame
    const empty = isEmptyContainer(value)
    if (key !== undefined) {
      if (empty !== null) lines.push(`${pad}${key}: ${empty}`)
      else if (isContainer(value)) {
        lines.push(`${pad}${key}:`)
        stack.push(frameOf(value, depth + 1, undefined))
      } else lines.push(`${pad}${key}: ${scalar(value, pad)}`)
    } else {
      if (empty !== null) lines.push(`${pad}- ${empty}`)
      else if (isContainer(value)) stack.push(frameOf(value, depth + 1, { line: lines.length, pad }))
      else lines.push(`${pad}- ${scalar(value, pad)}`)
    }
  }
}

/** The text of a run's `state`: a string as is, an object or array as indented lines. */
export const renderState = (state: unknown): string => {
  if (typeof state === "string") return state
  const empty = isEmptyContainer(state)
  if (empty !== null) return empty
  if (!isContainer(state)) return scalar(state, "")
  const lines: Array<string> = []
  renderContainer(state, lines)
  return lines.join("\n")
}

/** The text of a run's `messages`: `role: content` turns separated by a blank line. */
export const renderMessages = (messages: ReadonlyArray<MessageTurn>): string =>
  messages.map((turn) => `${turn.role}: ${turn.content}`).join("\n\n")
