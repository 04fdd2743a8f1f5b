/**
 * The "letter readout" of decisions.md as chat-completions request bodies and response parsing; no I/O here, so
 * any OpenAI-compatible transport (or the local model's usage accounting) reuses it. A read's prompt holds the
 * rendered state, the earlier answers it depends on, the question and its options under letters A, B, ...; the
 * letter request asks for one token with the top 20 log-probabilities at temperature 0. With think tokens, a first
 * request asks for a thought of at most that many tokens, and the letter request carries it as an assistant turn.
 * Reading the letter: each top log-probability token is trimmed of surrounding whitespace and must then be exactly
 * an upper-case option letter (" A" and "A\n" count as A; "a" does not, since a lower-case "a" or "i" is as likely
 * the start of a sentence as an answer); probabilities of tokens naming the same letter add up, and the options'
 * letters are renormalized among themselves.
 */
import { Predicate } from "effect"
import { unstorableReason } from "../db/StorableText.js"
import type { Read } from "./ModelProvider.js"
import { utf8Bytes } from "../encoding/Utf8.js"

/** Letters naming options, in order; a question has at most 20 options. */
export const LETTERS = "ABCDEFGHIJKLMNOPQRST"

/** A chat-completions request body. */
export interface ChatRequest {
  readonly model: string
  readonly messages: ReadonlyArray<{ readonly role: "user" | "assistant"; readonly content: string }>
  readonly max_tokens: number
  readonly temperature: number
  readonly logprobs?: boolean
  readonly top_logprobs?: number
}

/** Token counts the upstream reported for a call. */
export interface Usage {
  readonly inputTokens: number
  readonly outputTokens: number
}

/** A parsed letter response: unreadable (a failed attempt), or answered (billed) with probabilities or null. */
export type LetterReply =
  | { readonly _tag: "Malformed"; readonly reason: string }
  | {
    readonly _tag: "Answered"
    readonly id: string | null
    readonly usage: Usage
    /** Per option in the read's order, summing to 1; null when no option letter has a log-probability. */
    readonly probabilities: ReadonlyArray<number> | null
  }

/** A parsed thought response: unreadable (a failed attempt), or the thought (billed). */
export type ThoughtReply =
  | { readonly _tag: "Malformed"; readonly reason: string }
  | { readonly _tag: "Thought"; readonly id: string | null; readonly usage: Usage; readonly text: string }

const letterRange = (read: Read): string => `${LETTERS[0]} to ${LETTERS[read.options.length - 1]}`

const promptBody = (read: Read, state: string): string => {
  const sections = ["Read the state below, then answer the question about it.", `State:\n${state}`]
  if (read.context.length > 0) {
    const answers = read.context.map((earlier) =>
      `- ${earlier.question}: ${earlier.instructions}\n  answer: ${earlier.answer}`
    )
    sections.push(`Earlier answers:\n${answers.join("\n")}`)
  }
  sections.push(
    read.type === "noul"
      ? `Proposition: ${read.instructions}\nIs the proposition true of the state?`
      : `Question: ${read.instructions}`
  )
  const options = read.options.map((option, index) =>
    `${LETTERS[index]}. ${option.name}${option.description === null ? "" : ` - ${option.description}`}`
  )
  sections.push(`Options:\n${options.join("\n")}`)
  return sections.join("\n\n")
}

const letterInstruction = (read: Read): string =>
  `Answer with the letter of the correct option (${letterRange(read)}) alone, nothing else.`

const thinkInstruction = (read: Read): string =>
  `Think about which option is correct in at most ${read.thinkTokens} tokens. Do not give the letter yet.`

const followUp = (read: Read): string =>
  `Now answer with the letter of the correct option (${letterRange(read)}) alone, nothing else.`

/** The user message of a letter request made without a thought. */
export const letterPrompt = (read: Read): string => `${promptBody(read, read.state)}\n\n${letterInstruction(read)}`

/** The user message of the thought request. */
export const thinkPrompt = (read: Read): string => `${promptBody(read, read.state)}\n\n${thinkInstruction(read)}`

/**
 * UTF-8 bytes of a read's prompts without rendering its state again: `answer` is the letter request's user message
 * with no thought, `think` the thought request's, `followUp` the extra text the letter request after a thought adds.
 */
export const letterPromptBytes = (read: Read, stateBytes: number) => {
  const body = utf8Bytes(promptBody(read, "")) + stateBytes
  return {
    answer: body + utf8Bytes(`\n\n${letterInstruction(read)}`),
    think: body + utf8Bytes(`\n\n${thinkInstruction(read)}`),
    followUp: utf8Bytes(followUp(read))
  }
}

/** The letter request body: no thought (`thought` null) or after the given thought. */
export const letterRequest = (model: string, read: Read, thought: string | null): ChatRequest => ({
  model,
  messages: thought === null
    ? [{ role: "user", content: letterPrompt(read) }]
    : [
      { role: "user", content: thinkPrompt(read) },
      { role: "assistant", content: thought },
      { role: "user", content: followUp(read) }
    ],
  max_tokens: 1,
  logprobs: true,
  top_logprobs: 20,
  temperature: 0
})

/** The thought request body, its length capped at `maxTokens`. */
export const thinkRequest = (model: string, read: Read, maxTokens: number): ChatRequest => ({
  model,
  messages: [{ role: "user", content: thinkPrompt(read) }],
  max_tokens: maxTokens,
  temperature: 0
})

/** Longest upstream request id kept for the ledger. */
const MaxRequestIdLength = 512

const isCount = (u: unknown): u is number => typeof u === "number" && Number.isSafeInteger(u) && u >= 0

type Envelope =
  | { readonly _tag: "Malformed"; readonly reason: string }
  | { readonly _tag: "Read"; readonly id: string | null; readonly usage: Usage; readonly json: Readonly<Record<string, unknown>> }

const readEnvelope = (text: string): Envelope => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return { _tag: "Malformed", reason: "the body is not JSON" }
  }
  if (!Predicate.isObject(json)) return { _tag: "Malformed", reason: "the body is not a JSON object" }
  const usage = json["usage"]
  if (!Predicate.isObject(usage) || !isCount(usage["prompt_tokens"]) || !isCount(usage["completion_tokens"])) {
    return { _tag: "Malformed", reason: "the body has no usable usage" }
  }
  // The id is stored in the ledger: one PostgreSQL could not store (a NUL, a lone surrogate) or absurdly long is dropped.
  const id = typeof json["id"] === "string" && json["id"].length > 0 && json["id"].length <= MaxRequestIdLength &&
      unstorableReason(json["id"]) === undefined
    ? json["id"]
    : null
  return {
    _tag: "Read",
    id,
    usage: { inputTokens: usage["prompt_tokens"], outputTokens: usage["completion_tokens"] },
    json
  }
}

const firstChoice = (json: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> | null => {
  const choices = json["choices"]
  const first: unknown = Array.isArray(choices) ? choices[0] : undefined
  return Predicate.isObject(first) ? first : null
}

const letterCandidates = (choice: Readonly<Record<string, unknown>> | null): ReadonlyArray<unknown> => {
  const logprobs = choice?.["logprobs"]
  const content = Predicate.isObject(logprobs) ? logprobs["content"] : undefined
  const first: unknown = Array.isArray(content) ? content[0] : undefined
  if (!Predicate.isObject(first)) return []
  const top = Array.isArray(first["top_logprobs"]) ? first["top_logprobs"] : []
  return [first, ...top]
}

const letterProbabilities = (candidates: ReadonlyArray<unknown>, optionCount: number): ReadonlyArray<number> | null => {
  const byLetter = new Array<number>(optionCount).fill(0)
  const seen = new Set<string>()
  for (const candidate of candidates) {
    if (!Predicate.isObject(candidate) || typeof candidate["token"] !== "string") continue
    const token = candidate["token"]
    const logprob = candidate["logprob"]
    if (seen.has(token) || typeof logprob !== "number" || !Number.isFinite(logprob)) continue
    seen.add(token)
    const index = LETTERS.indexOf(token.trim())
    if (token.trim().length !== 1 || index < 0 || index >= optionCount) continue
    byLetter[index] = byLetter[index]! + Math.exp(Math.min(0, logprob))
  }
  const total = byLetter.reduce((sum, p) => sum + p, 0)
  return total > 0 ? byLetter.map((p) => p / total) : null
}

/** Parses a letter response body for a read of `optionCount` options. */
export const parseLetterResponse = (text: string, optionCount: number): LetterReply => {
  const envelope = readEnvelope(text)
  if (envelope._tag === "Malformed") return envelope
  return {
    _tag: "Answered",
    id: envelope.id,
    usage: envelope.usage,
    probabilities: letterProbabilities(letterCandidates(firstChoice(envelope.json)), optionCount)
  }
}

/** Parses a thought response body; a missing or null message content is an empty thought. */
export const parseThoughtResponse = (text: string): ThoughtReply => {
  const envelope = readEnvelope(text)
  if (envelope._tag === "Malformed") return envelope
  const message = firstChoice(envelope.json)?.["message"]
  const content = Predicate.isObject(message) && typeof message["content"] === "string" ? message["content"] : ""
  return { _tag: "Thought", id: envelope.id, usage: envelope.usage, text: content }
}
