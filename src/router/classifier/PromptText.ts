/**
 * The text the classifier reads. The router sends the prompt excerpt (`PromptExcerpt.ts`) as the run's state, a
 * plain string the state rendering leaves as is; a long task's excerpt carries one line saying how many characters
 * were left out. That line is taken out of the text and its count added back, so features see the user's words and
 * the task's real length, never the marker. Training reads corpus prompts through the same excerpt first.
 */
import { promptExcerpt } from "../classification/PromptExcerpt.js"

/** The user's text as the classifier reads it, with the length of the whole task. */
export interface PromptText {
  /** The excerpt without the omission marker. */
  readonly text: string
  /** Characters of the whole task (the excerpt's plus those omitted). */
  readonly totalChars: number
  /** True when the task was longer than the excerpt. */
  readonly omitted: boolean
}

const MARKER = /\n\n\[\.\.\. (\d+) characters of the task omitted \.\.\.\]\n\n/

/** Reads a classification state (a prompt excerpt) back into its text and the task's full length. */
export const promptTextOfState = (state: string): PromptText => {
  const match = MARKER.exec(state)
  if (match === null) return { text: state, totalChars: state.length, omitted: false }
  const text = `${state.slice(0, match.index)}\n\n${state.slice(match.index + match[0].length)}`
  return { text, totalChars: text.length - 2 + Number(match[1]), omitted: true }
}

/** The text the classifier reads of a whole task, exactly as the router would send it. */
export const promptTextOfTask = (task: string): PromptText => promptTextOfState(promptExcerpt(task))
