/**
 * The `ModelProvider` for any OpenAI-compatible chat-completions server (vLLM, llama.cpp, Ollama, OpenAI): the
 * transport only (URL, bearer key, per-attempt timeout, retries, ledger entries, spans, metrics); the prompt and the
 * parsing are LetterReadout's. Each attempt is one `ModelCall`. Retried on the schedule of UpstreamRetry.ts
 * (exponential backoff with jitter, at least the upstream's `Retry-After`, never waiting past the deadline): 429,
 * 5xx, timeouts, connection errors and unreadable bodies. Not retried: a 2xx without usable
 * log-probabilities (decision_unavailable: the model answered, and at temperature 0 it would answer the same), a
 * 413 or a context-length 400 (input_too_large), other 4xx (provider_unavailable: the upstream refuses this service).
 * Errors after the last attempt follow decisions.md "Precise rules"; the deadline passing wins over any of them.
 */
import { Clock, Effect, Either, Layer, Redacted } from "effect"
import {
  DeadlineExceeded,
  DecisionUnavailable,
  InputTooLarge,
  ProviderBadResponse,
  ProviderRateLimited,
  ProviderUnavailable
} from "../../schema/Errors.js"
import { count, labels, LabelSets, record, upstreamCalls, upstreamCallSeconds, upstreamRetries } from "../telemetry/Metrics.js"
import { closeEndpoint, openEndpoint, postJson } from "./HttpPost.js"
import type { Endpoint, PostFailure, PostResponse } from "./HttpPost.js"
import { letterRequest, parseLetterResponse, parseThoughtResponse, thinkRequest } from "./LetterReadout.js"
import type { ChatRequest, Usage } from "./LetterReadout.js"
import { ModelProvider, ProviderFailure } from "./ModelProvider.js"
import type { ModelCall, ProviderError, ProviderIdentity, Read, ReadOptions } from "./ModelProvider.js"
import { type AttemptFailure, type FailureKind, retryAfterMs, retrying } from "./UpstreamRetry.js"
import { annotateSpan, withTracedSpan } from "../telemetry/Spans.js"

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
  /** First backoff delay before jitter (default 250 ms), doubling per retry up to 8,000 ms; `Retry-After` may lengthen it. */
  readonly retryBaseDelayMs?: number | undefined
}

type Attempt<A> =
  | { readonly _tag: "Billed"; readonly id: string | null; readonly usage: Usage; readonly result: Either.Either<A, ProviderError> }
  | { readonly _tag: "Failed"; readonly id: string | null; readonly kind: FailureKind; readonly detail: string }
  | { readonly _tag: "Refused"; readonly id: string | null; readonly error: ProviderError }

type Interpret<A> = (body: string) => Attempt<A>

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

/** What every attempt of one provider shares. */
interface Transport {
  readonly endpoint: Endpoint
  readonly attemptTimeoutMs: number
  readonly identity: ProviderIdentity
  /** Metric series by `purpose outcome`. */
  readonly series: LabelSets
}

/** What one call (one question's think or answer) shares across its attempts. */
interface CallContext<A> {
  readonly purpose: ModelCall["purpose"]
  readonly body: string
  readonly interpret: Interpret<A>
  readonly deadline: number
  readonly calls: Array<ModelCall>
  readonly onCall: ((call: ModelCall) => void) | undefined
}

const outcomeLabel = <A>(attempt: Attempt<A>): string =>
  attempt._tag === "Billed" ? "succeeded" : attempt._tag === "Refused" ? "refused" : attempt.kind

/** One attempt: posts, records the ledger entry and the metrics, and answers or says how it failed. */
const attemptOnce = <A>(transport: Transport, call: CallContext<A>, ordinal: number): Effect.Effect<A, AttemptFailure> =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const remaining = call.deadline - started
    if (remaining <= 0) return yield* Effect.fail(final(deadlineExceeded()))
    const cutByDeadline = remaining <= transport.attemptTimeoutMs
    const timeoutMs = Math.min(transport.attemptTimeoutMs, remaining)
    const startedPrecise = performance.now()
    const { outcome, retryAfter } = yield* postAttempt(transport, call, ordinal, timeoutMs)
    const ended = yield* Clock.currentTimeMillis
    const series = transport.series.get(`${call.purpose} ${outcomeLabel(outcome)}`)
    count(upstreamCalls, series)
    record(upstreamCallSeconds, (performance.now() - startedPrecise) / 1000, series)
    const made = ledgerEntry(outcome, ordinal, ended, call.purpose)
    call.calls.push(made)
    call.onCall?.(made)
    if (outcome._tag === "Billed") {
      return yield* Either.match(outcome.result, { onLeft: (error) => Effect.fail(final(error)), onRight: Effect.succeed })
    }
    if (outcome._tag === "Refused") return yield* Effect.fail(final(outcome.error))
    if (ended >= call.deadline || (outcome.kind === "timeout" && cutByDeadline)) {
      return yield* Effect.fail(final(deadlineExceeded()))
    }
    return yield* Effect.fail<AttemptFailure>({
      _tag: "Retryable",
      kind: outcome.kind,
      detail: outcome.detail,
      attempts: ordinal + 1,
      retryAfterMs: retryAfterMs(retryAfter, ended)
    })
  })

const final = (error: ProviderError): AttemptFailure => ({ _tag: "Final", error })

/** The POST of one attempt, classified, inside its `model.call` span. */
const postAttempt = <A>(transport: Transport, call: CallContext<A>, ordinal: number, timeoutMs: number) =>
  postJson(transport.endpoint, call.body, timeoutMs).pipe(
    Effect.either,
    Effect.map((response) => ({
      outcome: classify(response, call.interpret),
      retryAfter: Either.isRight(response) ? response.right.retryAfter : null
    })),
    Effect.tap(({ outcome }) =>
      annotateSpan({
        "model.input_tokens": outcome._tag === "Billed" ? outcome.usage.inputTokens : 0,
        "model.output_tokens": outcome._tag === "Billed" ? outcome.usage.outputTokens : 0
      })
    ),
    withTracedSpan("model.call", {
      attributes: {
        "model.provider": transport.identity.provider,
        "model.id": transport.identity.modelId,
        "model.retry_ordinal": ordinal,
        "model.purpose": call.purpose
      }
    })
  )

const ledgerEntry = <A>(outcome: Attempt<A>, ordinal: number, ended: number, purpose: ModelCall["purpose"]): ModelCall => {
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

/**
 * One call with its retries (UpstreamRetry.ts): attempts until one answers, a failure is final, or the schedule
 * stops; a retryable failure the schedule gave up on becomes the error of decisions.md "Precise rules".
 */
const callWithRetries = <A>(
  transport: Transport,
  retry: { readonly maxRetries: number; readonly baseDelayMs: number },
  call: CallContext<A>
): Effect.Effect<A, ProviderError> => {
  let ordinal = 0
  let previous: AttemptFailure | undefined
  const attempt = Effect.suspend(() => {
    if (previous?._tag === "Retryable") {
      const reason = previous.retryAfterMs === undefined ? "backoff" : "retry_after"
      count(upstreamRetries, transport.series.get(`retry ${reason}`))
    }
    return attemptOnce(transport, call, ordinal++).pipe(Effect.tapError((failure) => {
      previous = failure
      return failure._tag === "Retryable"
        ? Effect.logInfo(`upstream attempt ${failure.attempts} failed (${failure.kind}): ${failure.detail}`)
        : Effect.void
    }))
  })
  return retrying(attempt, { ...retry, deadline: call.deadline }).pipe(
    Effect.mapError((failure) =>
      failure._tag === "Final" ? failure.error : finalError(failure.kind, failure.detail, failure.attempts)
    )
  )
}

const seriesOf = (identity: ProviderIdentity) =>
  new LabelSets((key) => {
    const [purpose, outcome] = key.split(" ") as [string, string]
    return purpose === "retry"
      ? labels({ provider: identity.provider, reason: outcome })
      : labels({ provider: identity.provider, model: identity.modelId, purpose, outcome })
  })

/** Builds the provider over its own keep-alive connections (HttpPost.ts), closed when the scope closes. */
const make = (config: OpenAiCompatibleConfig) =>
  Effect.gen(function*() {
    const headers: Record<string, string> = { accept: "application/json", "user-agent": "arbiter/0.1.0" }
    if (config.apiKey !== undefined) headers["authorization"] = `Bearer ${Redacted.value(config.apiKey)}`
    const url = new URL(`${config.baseUrl.replace(/\/+$/, "")}/chat/completions`)
    const endpoint = yield* Effect.acquireRelease(Effect.sync(() => openEndpoint(url, headers)), (opened) =>
      Effect.promise(() => closeEndpoint(opened)))
    const identity = { provider: "openai", modelId: config.model }
    const transport: Transport = {
      endpoint,
      attemptTimeoutMs: config.attemptTimeoutMs ?? 120_000,
      identity,
      series: seriesOf(identity)
    }
    const retry = { maxRetries: config.maxRetries ?? 4, baseDelayMs: config.retryBaseDelayMs ?? 250 }
    const call = <A>(purpose: ModelCall["purpose"], request: ChatRequest, interpret: Interpret<A>, calls: Array<ModelCall>, options: ReadOptions) =>
      callWithRetries(transport, retry, {
        purpose,
        body: JSON.stringify(request),
        interpret,
        deadline: options.deadline,
        calls,
        onCall: options.onCall
      })

    return ModelProvider.of({
      identity,
      read: (read: Read, options: ReadOptions) => {
        const calls: Array<ModelCall> = []
        return Effect.gen(function*() {
          const thought = read.thinkTokens > 0
            ? yield* call("think", thinkRequest(config.model, read, read.thinkTokens), interpretThought, calls, options)
            : null
          const probabilities = yield* call(
            "answer",
            letterRequest(config.model, read, thought),
            interpretLetter(read.options.length),
            calls,
            options
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
