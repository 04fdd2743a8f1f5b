/**
 * What an OpenAI-compatible upstream's reply to one attempt means (OpenAiCompatible.ts makes the attempts): a 2xx
 * body read as a letter answer or a thought (LetterReadout.ts), billed with its usage; 429, 5xx, timeouts, connection
 * failures and unreadable bodies failed and retryable; a 413 or a context-length 400 refused as input_too_large, any
 * other 4xx as provider_unavailable. Each attempt's ledger entry, and the error of a call whose retries ran out.
 */
import { Result } from "effect"
import {
  DecisionUnavailable,
  InputTooLarge,
  ProviderBadResponse,
  ProviderRateLimited,
  ProviderUnavailable
} from "../../schema/Errors.js"
import type { PostResult } from "./HttpPost.js"
import { parseLetterResponse, parseThoughtResponse, type Usage } from "./LetterReadout.js"
import type { ModelCall, ProviderError } from "./ModelProvider.js"
import type { FailureKind } from "./UpstreamRetry.js"

/** What one attempt came to: billed (the model answered), failed (retryable), or refused (final, not billed). */
export type Attempt<A> =
  | { readonly _tag: "Billed"; readonly id: string | null; readonly usage: Usage; readonly result: Result.Result<A, ProviderError> }
  | { readonly _tag: "Failed"; readonly id: string | null; readonly kind: FailureKind; readonly detail: string }
  | { readonly _tag: "Refused"; readonly id: string | null; readonly error: ProviderError }

/** Reads a 2xx body as the attempt it makes. */
export type Interpret<A> = (body: string) => Attempt<A>

const CONTEXT_LENGTH = /context[ _-]?length|maximum context|too many tokens/i

/** An attempt's POST result as the attempt it makes, the body read by `interpret` when the status is 2xx. */
export const classify = <A>(result: PostResult, interpret: Interpret<A>): Attempt<A> => {
  switch (result._tag) {
    case "Timeout":
      return { _tag: "Failed", id: null, kind: "timeout", detail: "no answer in time" }
    case "Connection":
      return { _tag: "Failed", id: null, kind: "unavailable", detail: `connection failed (${result.code})` }
    case "TooLarge":
      return { _tag: "Failed", id: null, kind: "bad_response", detail: "the body is too large" }
  }
  const { body, requestId, status } = result.response
  if (status >= 200 && status < 300) {
    const attempt = interpret(body)
    return attempt._tag === "Failed" && attempt.id === null ? { ...attempt, id: requestId } : attempt
  }
  if (status === 429) return { _tag: "Failed", id: requestId, kind: "rate_limited", detail: "status 429" }
  if (status >= 500) return { _tag: "Failed", id: requestId, kind: "unavailable", detail: `status ${status}` }
  const error = status === 413 || (status === 400 && CONTEXT_LENGTH.test(body))
    ? new InputTooLarge({ message: "the input is over the decision model's own context limit" })
    : new ProviderUnavailable({ message: `the upstream model service refused the call with status ${status}` })
  return { _tag: "Refused", id: requestId, error }
}

/** The error of a call whose retries ended on a retryable failure (decisions.md, "Precise rules"). */
export const finalError = (kind: FailureKind, detail: string, attempts: number): ProviderError => {
  const tries = attempts === 1 ? "1 attempt" : `${attempts} attempts`
  switch (kind) {
    case "rate_limited":
      return new ProviderRateLimited({ message: `the upstream model service rate-limited the call (${tries})` })
    case "unavailable":
      return new ProviderUnavailable({ message: `the upstream model service failed: ${detail} (${tries})` })
    case "timeout":
      return new ProviderUnavailable({ message: `the upstream model service did not answer in time (${tries})` })
    case "bad_response":
      return new ProviderBadResponse({
        message: `the upstream model service returned an unreadable response: ${detail} (${tries})`
      })
  }
}

const unreadable = <A>(reason: string): Attempt<A> => ({ _tag: "Failed", id: null, kind: "bad_response", detail: reason })

/** A letter answer: its option probabilities, or decision_unavailable without log-probabilities. */
export const interpretLetter = (optionCount: number): Interpret<ReadonlyArray<number>> => (body) => {
  const reply = parseLetterResponse(body, optionCount)
  if (reply._tag === "Malformed") return unreadable(reply.reason)
  return {
    _tag: "Billed",
    id: reply.id,
    usage: reply.usage,
    result: reply.probabilities === null
      ? Result.fail(new DecisionUnavailable({ message: "the model gave no log-probabilities for the option letters" }))
      : Result.succeed(reply.probabilities)
  }
}

/** A thought: its text. */
export const interpretThought: Interpret<string> = (body) => {
  const reply = parseThoughtResponse(body)
  if (reply._tag === "Malformed") return unreadable(reply.reason)
  return { _tag: "Billed", id: reply.id, usage: reply.usage, result: Result.succeed(reply.text) }
}

/** The attempt's outcome as a metric label. */
export const outcomeLabel = <A>(attempt: Attempt<A>): string =>
  attempt._tag === "Billed" ? "succeeded" : attempt._tag === "Refused" ? "refused" : attempt.kind

/** The attempt's ledger entry: billed with its tokens, or failed with none. */
export const ledgerEntry = <A>(outcome: Attempt<A>, ordinal: number, ended: number, purpose: ModelCall["purpose"]): ModelCall => {
  const billed = outcome._tag === "Billed"
  return {
    retryOrdinal: ordinal,
    status: billed ? "succeeded" : "failed",
    inputTokens: billed ? outcome.usage.inputTokens : 0,
    outputTokens: billed ? outcome.usage.outputTokens : 0,
    providerRequestId: outcome.id,
    at: new Date(ended),
    purpose
  }
}
