/**
 * What the decision model reads of a task (spec, Router select request: "only the head and tail are read for
 * classification"): a task of at most HEAD_CHARS + TAIL_CHARS characters whole; a longer one as its first
 * HEAD_CHARS and last TAIL_CHARS characters around a line that says how much was left out. The sizes keep the
 * classification's cost bounded whatever the prompt: at most about 8,000 characters per model call, so even 16 reads
 * of a prompt of 4-byte characters stay far below the run's spend ceiling. A cut never splits a surrogate pair.
 */

/** Characters read from the start of a long task: the request itself usually opens it. */
export const HEAD_CHARS = 6_000

/** Characters read from the end of a long task: where a question follows a pasted document. */
export const TAIL_CHARS = 2_000

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff

const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff

/** The text the classification reads: the task whole, or its head and tail with the omitted length between. */
export const promptExcerpt = (text: string): string => {
  if (text.length <= HEAD_CHARS + TAIL_CHARS) return text
  let headEnd = HEAD_CHARS
  if (isHighSurrogate(text.charCodeAt(headEnd - 1))) headEnd -= 1
  let tailStart = text.length - TAIL_CHARS
  if (isLowSurrogate(text.charCodeAt(tailStart))) tailStart += 1
  const omitted = tailStart - headEnd
  return `${text.slice(0, headEnd)}\n\n[... ${omitted} characters of the task omitted ...]\n\n${text.slice(tailStart)}`
}
