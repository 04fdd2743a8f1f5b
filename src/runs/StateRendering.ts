/**
 * The text a model reads for a run's `state` or `messages` (decisions.md, State rendering). A string state is used
 * as is. An object becomes `key: value` lines in the object's own key order, nested objects and arrays indented by
 * two spaces per level under a `key:` line, array items as `- item` lines (an object item starts on its dash
 * line: `- name: x`), empty containers as `{}` / `[]`, null as `null`, numbers as JSON prints them, and the
 * continuation lines of a multi-line string indented under their key. Messages become `role: content` turns
 * separated by a blank line. The same input always gives the same text, and any nesting renders (the walk keeps its
 * own stack rather than recursing). Indentation grows with depth, so a small body can describe a huge text: the walk
 * counts what it writes and stops once it passes a budget of UTF-16 code units (each is at least one UTF-8 byte),
 * so the cost of rendering stays bounded by the budget whatever the body.
 */
import { Predicate } from "effect"

const INDENT = "  "

/** Thrown by the walk when the text would pass its budget; caught in `renderState`. */
const OverBudget: unique symbol = Symbol("OverBudget")

/** The code units a multi-line string takes once its continuation lines are indented under `pad`. */
const scalarSize = (value: string, pad: string): number => {
  let newlines = 0
  for (let index = value.indexOf("\n"); index !== -1; index = value.indexOf("\n", index + 1)) newlines++
  return value.length + newlines * (pad.length + INDENT.length)
}

const scalar = (value: unknown, pad: string): string => {
  if (value === null || value === undefined) return "null"
  if (typeof value === "string") return value === "" ? `""` : value.split("\n").join(`\n${pad}${INDENT}`)
  return JSON.stringify(value) ?? "null"
}

const isEmptyContainer = (value: unknown): string | null => {
  if (Array.isArray(value)) return value.length === 0 ? "[]" : null
  if (Predicate.isObject(value)) return Object.keys(value).length === 0 ? "{}" : null
  return null
}

/** One container being rendered: its entries (keys of an object, undefined for array items) and how far it got. */
interface Frame {
  readonly entries: ReadonlyArray<readonly [string | undefined, unknown]>
  readonly depth: number
  readonly pad: string
  index: number
}

/** Indentation by depth, made once per depth. */
const pads: Array<string> = [""]
const padOf = (depth: number): string => {
  while (pads.length <= depth) pads.push(pads[pads.length - 1]! + INDENT)
  return pads[depth]!
}

const frameOf = (value: Readonly<Record<string, unknown>> | ReadonlyArray<unknown>, depth: number): Frame => ({
  entries: Array.isArray(value)
    ? value.map((item) => [undefined, item] as const)
    : Object.entries(value as Readonly<Record<string, unknown>>),
  depth,
  pad: padOf(depth),
  index: 0
})

/**
 * Puts the dash of each array item that is a container on the first line of its rendering: `- ` over the two spaces
 * at the item's own indentation. Nested items share a line (`- - 1`); each line is rebuilt once, so the work stays
 * linear in the text however deep the nesting. `dashes` holds [line, column] pairs in line then column order.
 */
const applyDashes = (lines: Array<string>, dashes: ReadonlyArray<readonly [number, number]>) => {
  let next = 0
  while (next < dashes.length) {
    const line = dashes[next]![0]
    const text = lines[line]!
    let rebuilt = ""
    let from = 0
    for (; next < dashes.length && dashes[next]![0] === line; next++) {
      const column = dashes[next]![1]
      rebuilt += `${text.slice(from, column)}- `
      from = column + INDENT.length
    }
    lines[line] = rebuilt + text.slice(from)
  }
}

// Depth-first with an explicit stack, so no nesting can exhaust the call stack; the lines are the same a recursive
// walk gives (a container's lines follow its `key:` line; an array item's first line gets its dash at the end).
const renderContainer = (
  root: Readonly<Record<string, unknown>> | ReadonlyArray<unknown>,
  lines: Array<string>,
  budget: number
) => {
  let remaining = budget + 1 // every line pays for a newline; the first has none
  const spend = (size: number) => {
    remaining -= size + 1
    if (remaining < 0) throw OverBudget
  }
  const push = (line: string) => {
    spend(line.length)
    lines.push(line)
  }
  const pushScalar = (head: string, value: unknown, pad: string) => {
    spend(head.length + (typeof value === "string" ? scalarSize(value, pad) : 0))
    lines.push(`${head}${scalar(value, pad)}`)
  }
  const dashes: Array<readonly [number, number]> = []
  const stack: Array<Frame> = [frameOf(root, 0)]
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!
    if (frame.index === frame.entries.length) {
      stack.pop()
      continue
    }
    const [key, value] = frame.entries[frame.index]!
    frame.index += 1
    const { depth, pad } = frame
    const head = key === undefined ? `${pad}- ` : `${pad}${key}: `
    const empty = isEmptyContainer(value)
    if (empty !== null) push(`${head}${empty}`)
    else if (!Predicate.isObjectOrArray(value)) pushScalar(head, value, pad)
    else {
      if (key === undefined) dashes.push([lines.length, pad.length])
      else push(`${pad}${key}:`)
      stack.push(frameOf(value, depth + 1))
    }
  }
  applyDashes(lines, dashes)
}

/**
 * The text of a run's `state`: a string as is, an object or array as indented lines; undefined when the text would
 * be longer than `budget` UTF-16 code units (the walk stops there).
 */
export const renderState = (state: unknown, budget: number = Number.POSITIVE_INFINITY): string | undefined => {
  if (typeof state === "string") return state.length > budget ? undefined : state
  const empty = isEmptyContainer(state)
  if (empty !== null) return empty
  if (!Predicate.isObjectOrArray(state)) return scalar(state, "")
  const lines: Array<string> = []
  try {
    renderContainer(state, lines, budget)
  } catch (error) {
    if (error === OverBudget) return undefined
    throw error
  }
  return lines.join("\n")
}

/** The text of a run's `messages`: `role: content` turns separated by a blank line. */
export const renderMessages = (messages: ReadonlyArray<{ readonly role: string; readonly content: string }>): string =>
  messages.map((turn) => `${turn.role}: ${turn.content}`).join("\n\n")
