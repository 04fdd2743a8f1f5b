/**
 * A run's limits (spec, Limits; decisions.md, Precise rules): the input estimate and the input limit of each kind,
 * the spend ceiling and the cost of a call that counts against it, and the default and longest deadlines. Money is
 * integer micro-USD computed with BigInt, so no float rounding can creep in. The default decision deadline is
 * 30,000 + ceil(120,000 x input_tokens / 262,144) ms, at most 150,000 (rounded up, so a run is never given less time
 * than the formula).
 */
import { Result } from "effect"
import { InputTooLarge } from "../../schema/Errors.js"
import { canonicalJson } from "../encoding/CanonicalJson.js"
import { utf8Bytes } from "../encoding/Utf8.js"

export type RunKind = "decision" | "verdict"

/** Most estimated input tokens of a decision run (spec, Limits). */
export const DECISION_INPUT_LIMIT = 262_144
/** Most estimated input tokens of a verdict run (spec, Limits). */
export const VERDICT_INPUT_LIMIT = 64_000
/** A run's spend ceiling in micro-USD, held until settlement (spec, Limits). */
export const SPEND_CEILING_MICROS = 20_000
/** Longest `deadline_ms` of a decision run (spec, Limits). */
export const MAX_DECISION_DEADLINE_MS = 150_000
/** Longest `deadline_ms` of a verdict run (spec, Limits). */
export const MAX_VERDICT_DEADLINE_MS = 120_000

const MICROS_PER_MTOK = 1_000_000n

const assertCount = (name: string, value: number): void => {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a whole number >= 0, got ${value}`)
}

const ceilDiv = (numerator: bigint, denominator: bigint): bigint => (numerator + denominator - 1n) / denominator

/** Prompt bytes of a run: the UTF-8 bytes of its rendered `state` or `messages` (StateRendering.ts). */
export const promptBytes = (renderedPrompt: string): number => utf8Bytes(renderedPrompt)

/**
 * Contract bytes of a run: the UTF-8 bytes of the canonical JSON of `{instructions, questions}` for a decision or
 * `{instructions, schema}` for a verdict (an absent `instructions` is left out of the object).
 */
export const contractBytes = (contract: {
  readonly instructions?: string | undefined
  readonly questions?: unknown
  readonly schema?: unknown
}): number => utf8Bytes(canonicalJson(contract))

/** The spec's input estimate: ceil(prompt bytes / 4) + ceil(contract bytes / 4). */
export const inputEstimate = (bytes: { readonly promptBytes: number; readonly contractBytes: number }): number => {
  assertCount("promptBytes", bytes.promptBytes)
  assertCount("contractBytes", bytes.contractBytes)
  return Math.ceil(bytes.promptBytes / 4) + Math.ceil(bytes.contractBytes / 4)
}

/** The input token limit of a run kind. */
export const inputLimit = (kind: RunKind): number => (kind === "decision" ? DECISION_INPUT_LIMIT : VERDICT_INPUT_LIMIT)

/** The estimate itself when it is within the kind's limit, else `input_too_large` naming both numbers. */
export const checkInputEstimate = (kind: RunKind, estimate: number): Result.Result<number, InputTooLarge> =>
  estimate <= inputLimit(kind)
    ? Result.succeed(estimate)
    : Result.fail(
      new InputTooLarge({
        message: `estimated input of ${estimate} tokens is over the ${kind} limit of ${inputLimit(kind)} tokens`
      })
    )

/** The cost of one model call: input and output parts each rounded up to a whole micro-USD, then added. */
export const callCostMicros = (inputTokens: number, outputTokens: number, pricePerMtokMicros: number): number => {
  assertCount("inputTokens", inputTokens)
  assertCount("outputTokens", outputTokens)
  assertCount("pricePerMtokMicros", pricePerMtokMicros)
  const price = BigInt(pricePerMtokMicros)
  const cost = ceilDiv(BigInt(inputTokens) * price, MICROS_PER_MTOK) +
    ceilDiv(BigInt(outputTokens) * price, MICROS_PER_MTOK)
  return Number(cost)
}

/** The default `deadline_ms` of a run of this kind and input estimate. */
export const defaultDeadlineMs = (kind: RunKind, inputTokens: number): number => {
  assertCount("inputTokens", inputTokens)
  if (kind === "verdict") return 30_000
  const scaled = Number(ceilDiv(120_000n * BigInt(inputTokens), BigInt(DECISION_INPUT_LIMIT)))
  return Math.min(MAX_DECISION_DEADLINE_MS, 30_000 + scaled)
}
