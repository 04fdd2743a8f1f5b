/**
 * The `ModelProvider` for any OpenAI-compatible chat-completions server (vLLM, llama.cpp, Ollama, OpenAI): the
 * transport only (URL, bearer key, per-attempt timeout, retries, ledger entries, spans); the prompt and the parsing
 * are LetterReadout's. Each attempt is one `ModelCall`. Retried with exponential backoff and jitter while the
 * deadline allows: 429, 5xx, timeouts, connection errors and unreadable bodies. Not retried: a 2xx without usable
 * log-probabilities (decision_unavailable: the model answered, and at temperature 0 it would answer the same), a
 * 413 or a context-length 400 (input_too_large), other 4xx (provider_unavailable: the upstream refuses this service).
 * Errors after the last attempt follow decisions.md "Precise rules"; the deadline passing wins over any of them.
 */
import { Clock, Effect, Either, Layer, Random, Redacted } from "effect"
import {
  DeadlineExceeded,
  DecisionUnavailable,
  InputTooLarge,
  ProviderBadResponse,
  ProviderRateLimited,
  ProviderUnavailable
} from "../../schema/Errors.js"
import { destroyAgents, makeAgents, postJson } from "./HttpPost.js"
import type { Agents, PostFailure, PostResponse } from "./HttpPost.js"
import { letterRequest, parseLetterResponse, parseThoughtResponse, thinkRequest } from "./LetterReadout.js"
import type { ChatRequest, Usage } from "./LetterReadout.js"
import { ModelProvider, ProviderFailure } from "./ModelProvider.js"
import type { ModelCall, ProviderError, Read, ReadOptions } from "./ModelProvider.js"

/** Settings of an OpenAI-compatible upstream. */
export interface OpenAiCompatibleConfig {
  /** The API root up to and including `/v1`, e.g. `https://api.openai.com/v1`. */
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted | undefined
  /** The upstream model name sent as `model`. */
  readonly model: string
  /** Longest single attempt (default 120,000 ms); always cut to the time left before the deadline. */
  readonly attemptTimeoutMs?: number | undefined
  /** Retries after the first attempt of a call (default 4). */
  readonly maxRetries?: number | undefined
  /** First backoff delay before jitter (default 250 ms), doubling per retry up to 8,000 ms. */
  readonly retryBaseDelayMs?: number | undefined
}

type FailureKind = "rate_limited" | "unavailable" | "bad_response" | "timeout"

type Attempt<A> =
  | { readonly _tag: "Billed"; readonly id: string | null; readonly usage: Usage; readonly result: Either.Either<A, ProviderError> }
  | { readonly _tag: "Failed"; readonly id: string | null; readonly kind: FailureKind; readonly detail: string }
  | { readonly _tag: "Refused"; readonly id: string | null; readonly error: ProviderError }

type Interpret<A> = (body: string) => Attempt<A>

const MAX_BACKOFF_MS = 8_000
const CONTEXT_LENGTH = /context[ _-]?length|maximum context|too many tokens/i

const classify = <A>(response: Either.Either<PostResponse, PostFailure>, interpret: Interpret<A>): Attempt<A> => {
  if (Either.isLeft(response)) {
    const failure = response.left
    switch (failure._tag) {
      case "Timeout":
        return { _tag: "Failed", id: null, kind: "timeout", detail: "no answer in time" }
      case "Connection":
        return { _tag: "Failed", id: null, kind: "unavailable", detail: `connection failed (${failure.code})` }
      case "TooLarge":
        return { _tag: "Failed", id: null, kind: "bad_response", detail: "the body is too large" }
    }
  }
  const { body, requestId, status } = response.right
  if (status >= 200 && status < 300) {
    const attempt = interpret(body)
    return attempt._tag === "Failed" && attempt.id === null ? { ...attempt, id: requestId } : attempt
  }
  if (status === 429) return { _tag: "Failed", id: requestId, kind: "rate_limited", detail: "status 429" }
  if (status >= 500) return { _tag: "Failed", id: requestId, kind: "unavailable", detail: `status ${status}` }
  if (status === 413 || (status === 400 && CONTEXT_LENGTH.test(body))) {
    return {
      _tag: "Refused",
      id: requestId,
      error: new InputTooLarge({ message: "the input is over the decision model's own context limit" })
    }
  }
  return {
    _tag: "Refused",
    id: requestId,
    error: new ProviderUnavailable({ message: `the upstream model service refused the call with status ${status}` })
  }
}

const finalError = (kind: FailureKind, detail: string, attempts: number): ProviderError => {
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

const deadlineExceeded = () => new DeadlineExceeded({ message: "the run's deadline passed during a model call" })

const unreadable = <A>(reason: string): Attempt<A> => ({ _tag: "Failed", id: null, kind: "bad_response", detail: reason })

const interpretLetter = (optionCount: number): Interpret<ReadonlyArray<number>> => (body) => {
  const reply = parseLetterResponse(body, optionCount)
  if (reply._tag === "Malformed") return unreadable(reply.reason)
  return {
    _tag: "Billed",
    id: reply.id,
    usage: reply.usage,
    result: reply.probabilities === null
      ? Either.left(new DecisionUnavailable({ message: "the model gave no log-probabilities for the option letters" }))
      : Either.right(reply.probabilities)
  }
}

const interpretThought: Interpret<string> = (body) => {
  const reply = parseThoughtResponse(body)
  if (reply._tag === "Malformed") return unreadable(reply.reason)
  return { _tag: "Billed", id: reply.id, usage: reply.usage, result: Either.right(reply.text) }
}

/** Builds the provider over its own keep-alive agents, closed when the scope closes. */
const make = (config: OpenAiCompatibleConfig) =>
  Effect.gen(function*() {
    const agents: Agents = yield* Effect.acquireRelease(Effect.sync(makeAgents), (made) =>
      Effect.sync(() => destroyAgents(made)))
    const url = new URL(`${config.baseUrl.replace(/\/+$/, "")}/chat/completions`)
    const attemptTimeoutMs = config.attemptTimeoutMs ?? 120_000
    const maxRetries = config.maxRetries ?? 4
    const baseDelayMs = config.retryBaseDelayMs ?? 250
    const headers: Record<string, string> = { accept: "application/json", "user-agent": "arbiter/0.1.0" }
    if (config.apiKey !== undefined) headers["authorization"] = `Bearer ${Redacted.value(config.apiKey)}`
    const identity = { provider: "openai", modelId: config.model }

    const call = <A>(
      purpose: ModelCall["purpose"],
      request: ChatRequest,
      interpret: Interpret<A>,
      deadline: number,
      calls: Array<ModelCall>,
      onCall: ((call: ModelCall) => void) | undefined
    ): Effect.Effect<A, ProviderError> => {
      const body = JSON.stringify(request)
      const attempt = (ordinal: number): Effect.Effect<A, ProviderError> =>
        Effect.gen(function*() {
          const started = yield* Clock.currentTimeMillis
          const remaining = deadline - started
          if (remaining <= 0) return yield* Effect.fail(deadlineExceeded())
          const cutByDeadline = remaining <= attemptTimeoutMs
          const outcome = yield* postJson({ agents, url, headers, body, timeoutMs: Math.min(attemptTimeoutMs, remaining) })
            .pipe(
              Effect.either,
              Effect.map((response) => classify(response, interpret)),
              Effect.tap((outcome) =>
                Effect.annotateCurrentSpan({
                  "model.input_tokens": outcome._tag === "Billed" ? outcome.usage.inputTokens : 0,
                  "model.output_tokens": outcome._tag === "Billed" ? outcome.usage.outputTokens : 0
                })
              ),
              Effect.withSpan("model.call", {
                attributes: {
                  "model.provider": identity.provider,
                  "model.id": identity.modelId,
                  "model.retry_ordinal": ordinal,
                  "model.purpose": purpose
                }
              })
            )
          const ended = yield* Clock.currentTimeMillis
          const billed = outcome._tag === "Billed"
          const made: ModelCall = {
            retryOrdinal: ordinal,
            status: billed ? "succeeded" : "failed",
            inputTokens: billed ? outcome.usage.inputTokens : 0,
            outputTokens: billed ? outcome.usage.outputTokens : 0,
            providerRequestId: outcome.id,
            at: new Date(ended),
            purpose
          }
          calls.push(made)
          onCall?.(made)
          if (outcome._tag === "Billed") return yield* Either.match(outcome.result, { onLeft: Effect.fail, onRight: Effect.succeed })
          if (outcome._tag === "Refused") return yield* Effect.fail(outcome.error)
          if (ended >= deadline || (outcome.kind === "timeout" && cutByDeadline)) {
            return yield* Effect.fail(deadlineExceeded())
          }
          if (ordinal >= maxRetries) return yield* Effect.fail(finalError(outcome.kind, outcome.detail, ordinal + 1))
          const jitter = yield* Random.next
          const delay = Math.round(Math.min(MAX_BACKOFF_MS, baseDelayMs * 2 ** ordinal) * (0.5 + jitter / 2))
          if (ended + delay >= deadline) return yield* Effect.fail(finalError(outcome.kind, outcome.detail, ordinal + 1))
          yield* Effect.sleep(delay)
          return yield* attempt(ordinal + 1)
        })
      return attempt(0)
    }

    return ModelProvider.of({
      identity,
      read: (read: Read, options: ReadOptions) => {
        const calls: Array<ModelCall> = []
        return Effect.gen(function*() {
          const thought = read.thinkTokens > 0
            ? yield* call(
              "think",
              thinkRequest(config.model, read, read.thinkTokens),
              interpretThought,
              options.deadline,
              calls,
              options.onCall
            )
            : null
          const probabilities = yield* call(
            "answer",
            letterRequest(config.model, read, thought),
            interpretLetter(read.options.length),
            options.deadline,
            calls,
            options.onCall
          )
          return { probabilities, calls: [...calls] }
        }).pipe(Effect.mapError((error) => new ProviderFailure({ error, calls: [...calls] })))
      }
    })
  })

/** The OpenAI-compatible provider: `OpenAiCompatible.layer(config)` provides `ModelProvider`. */
export const OpenAiCompatible = {
  make,
  layer: (config: OpenAiCompatibleConfig): Layer.Layer<ModelProvider> => Layer.scoped(ModelProvider, make(config))
}
