/**
 * The `ModelProvider` for any OpenAI-compatible chat-completions server (vLLM, llama.cpp, Ollama, OpenAI): the
 * transport only (URL, bearer key, per-attempt timeout, retries, ledger entries, spans, metrics); the prompt and the
 * parsing are LetterReadout's, what a reply means UpstreamReplies'. Each attempt is one `ModelCall`. Retried on the
 * schedule of UpstreamRetry.ts (exponential backoff with jitter, at least the upstream's `Retry-After`, never waiting
 * past the deadline): 429, 5xx, timeouts, connection errors and unreadable bodies. Not retried: a 2xx without usable
 * log-probabilities (decision_unavailable: the model answered, and at temperature 0 it would answer the same), a 413
 * or a context-length 400 (input_too_large), other 4xx (provider_unavailable: the upstream refuses this service).
 * Errors after the last attempt follow decisions.md "Precise rules"; the deadline passing wins over any of them.
 */
import { Effect, Exit, Layer, Redacted, References, Result } from "effect"
import { DeadlineExceeded } from "../../schema/Errors.js"
import { count, labels, LabelSets, record, upstreamCalls, upstreamCallSeconds, upstreamRetries } from "../telemetry/Metrics.js"
import { annotateSpan } from "../telemetry/Spans.js"
import { closeEndpoint, type Endpoint, openEndpoint, post, type PostResult } from "./HttpPost.js"
import { type ChatRequest, letterRequest, thinkRequest } from "./LetterReadout.js"
import { ModelProvider, ProviderFailure } from "./ModelProvider.js"
import type { ModelCall, ProviderError, ProviderIdentity, Read, ReadOptions, ReadOutcome } from "./ModelProvider.js"
import {
  classify,
  finalError,
  type Interpret,
  interpretLetter,
  interpretThought,
  ledgerEntry,
  outcomeLabel
} from "./UpstreamReplies.js"
import { type AttemptFailure, retryAfterMs, retryFrom } from "./UpstreamRetry.js"

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

const deadlineExceeded = () => new DeadlineExceeded({ message: "the run's deadline passed during a model call" })

/** What every attempt of one provider shares, with its retry settings. */
interface Transport {
  readonly endpoint: Endpoint
  readonly attemptTimeoutMs: number
  readonly maxRetries: number
  readonly baseDelayMs: number
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

/** How an attempt ended: its result for the call, and its ledger entry (its tokens, for the span if kept). */
interface Attempted<A> {
  readonly exit: Exit.Exit<A, AttemptFailure>
  readonly made: ModelCall
}

/**
 * What an attempt comes to once its POST ended: counted and timed in the metrics, its ledger entry made and reported,
 * and its result for the call (the answer, a final error, or a failure the retry schedule decides on).
 */
const conclude = <A>(
  transport: Transport,
  call: CallContext<A>,
  ordinal: number,
  posted: { readonly result: PostResult; readonly startedMs: number; readonly cutByDeadline: boolean }
): Attempted<A> => {
  const outcome = classify(posted.result, call.interpret)
  const ended = Date.now()
  const series = transport.series.get(`${call.purpose} ${outcomeLabel(outcome)}`)
  count(upstreamCalls, series)
  record(upstreamCallSeconds, (performance.now() - posted.startedMs) / 1000, series)
  const made = ledgerEntry(outcome, ordinal, ended, call.purpose)
  call.calls.push(made)
  call.onCall?.(made)
  const attempted = (exit: Exit.Exit<A, AttemptFailure>): Attempted<A> => ({ exit, made })
  if (outcome._tag === "Billed") {
    return attempted(Result.isSuccess(outcome.result) ? Exit.succeed(outcome.result.success) : Exit.fail(final(outcome.result.failure)))
  }
  if (outcome._tag === "Refused") return attempted(Exit.fail(final(outcome.error)))
  if (ended >= call.deadline || (outcome.kind === "timeout" && posted.cutByDeadline)) {
    return attempted(Exit.fail(final(deadlineExceeded())))
  }
  const retryAfter = posted.result._tag === "Response" ? posted.result.response.retryAfter : null
  return attempted(Exit.fail({
    _tag: "Retryable",
    kind: outcome.kind,
    detail: outcome.detail,
    attempts: ordinal + 1,
    retryAfterMs: retryAfterMs(retryAfter, ended)
  }))
}

/** An attempt's timeout (the attempt timeout, cut to the time left before the deadline), or undefined once it passed. */
const attemptWindow = (transport: Transport, call: CallContext<unknown>) => {
  const remaining = call.deadline - Date.now()
  if (remaining <= 0) return undefined
  return { timeoutMs: Math.min(transport.attemptTimeoutMs, remaining), cutByDeadline: remaining <= transport.attemptTimeoutMs }
}

/**
 * One attempt: posts (within the attempt timeout, cut to the time left before the deadline), records the ledger
 * entry and the metrics, and answers or says how it failed. The POST and all that follows it is one asynchronous step
 * of the runtime (`post`'s callback does the rest), inside a `model.call` span only while spans are kept.
 */
const attemptOnce = <A>(transport: Transport, call: CallContext<A>, ordinal: number): Effect.Effect<A, AttemptFailure> =>
  Effect.withFiber((fiber) => {
    const window = attemptWindow(transport, call)
    if (window === undefined) return Effect.fail(final(deadlineExceeded()))
    const attempt = Effect.callback<Attempted<A>>((resume) => {
      const startedMs = performance.now()
      const abort = post(transport.endpoint, call.body, window.timeoutMs, (result) => {
        const posted = { result, startedMs, cutByDeadline: window.cutByDeadline }
        resume(Effect.succeed(conclude(transport, call, ordinal, posted)))
      })
      return Effect.sync(abort)
    })
    if (!fiber.getRef(References.TracerEnabled)) return Effect.flatMap(attempt, (attempted) => attempted.exit)
    // The span is the HTTP attempt: it ends once the answer is read, before the call's result (a failure for the
    // retry schedule to decide on is not the span's).
    const traced = Effect.tap(attempt, (attempted) =>
      annotateSpan({ "model.input_tokens": attempted.made.inputTokens, "model.output_tokens": attempted.made.outputTokens })
    ).pipe(Effect.withSpan("model.call", {
      attributes: {
        "model.provider": transport.identity.provider,
        "model.id": transport.identity.modelId,
        "model.retry_ordinal": ordinal,
        "model.purpose": call.purpose
      }
    }))
    return Effect.flatMap(traced, (attempted) => attempted.exit)
  })

const final = (error: ProviderError): AttemptFailure => ({ _tag: "Final", error })

/**
 * The retries of a call whose first attempt failed with `first` (UpstreamRetry.ts): attempts until one answers, a
 * failure is final, or the schedule stops; a retryable failure the schedule gave up on becomes the error of
 * decisions.md "Precise rules".
 */
const retriesAfter = <A>(transport: Transport, call: CallContext<A>, first: AttemptFailure): Effect.Effect<A, ProviderError> => {
  if (first._tag !== "Retryable") return Effect.fail(first.error)
  let ordinal = 1
  const logged = (failure: AttemptFailure) =>
    failure._tag === "Retryable"
      ? Effect.logInfo(`upstream attempt ${failure.attempts} failed (${failure.kind}): ${failure.detail}`)
      : Effect.void
  const again = (previous: AttemptFailure): Effect.Effect<A, AttemptFailure> =>
    Effect.suspend(() => {
      if (previous._tag === "Retryable") {
        const reason = previous.retryAfterMs === undefined ? "backoff" : "retry_after"
        count(upstreamRetries, transport.series.get(`retry ${reason}`))
      }
      return attemptOnce(transport, call, ordinal++)
    })
  const options = { maxRetries: transport.maxRetries, baseDelayMs: transport.baseDelayMs, deadline: call.deadline }
  return logged(first).pipe(
    Effect.andThen(retryFrom(first, (previous) => Effect.tapError(again(previous), logged), options)),
    Effect.mapError((failure) =>
      failure._tag === "Final" ? failure.error : finalError(failure.kind, failure.detail, failure.attempts))
  )
}

/**
 * One call with its retries: the first attempt runs on its own, and the retry loop is built only once it failed
 * (`retriesAfter`), as almost no call needs it.
 */
const callWithRetries = <A>(transport: Transport, call: CallContext<A>): Effect.Effect<A, ProviderError> =>
  Effect.catch(attemptOnce(transport, call, 0), (first) => retriesAfter(transport, call, first))

/** A read's outcome or failure, with every call it made. */
const outcomeOf = (calls: ReadonlyArray<ModelCall>) => ({
  onFailure: (error: ProviderError) => new ProviderFailure({ error, calls: [...calls] }),
  onSuccess: (probabilities: ReadonlyArray<number>): ReadOutcome => ({ probabilities, calls: [...calls] })
})

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
      maxRetries: config.maxRetries ?? 4,
      baseDelayMs: config.retryBaseDelayMs ?? 250,
      identity,
      series: seriesOf(identity)
    }
    const callOf = <A>(
      purpose: ModelCall["purpose"],
      request: ChatRequest,
      interpret: Interpret<A>,
      calls: Array<ModelCall>,
      options: ReadOptions
    ): CallContext<A> => ({ purpose, body: JSON.stringify(request), interpret, deadline: options.deadline, calls, onCall: options.onCall })
    const answerCall = (read: Read, thought: string | null, calls: Array<ModelCall>, options: ReadOptions) =>
      callOf("answer", letterRequest(config.model, read, thought), interpretLetter(read.options.length), calls, options)

    const readEffect = (read: Read, options: ReadOptions) => {
      const calls: Array<ModelCall> = []
      const answer = (thought: string | null) => callWithRetries(transport, answerCall(read, thought, calls, options))
      const reading = Effect.suspend(() =>
        read.thinkTokens > 0
          ? Effect.flatMap(
            callWithRetries(transport, callOf("think", thinkRequest(config.model, read, read.thinkTokens), interpretThought, calls, options)),
            answer
          )
          : answer(null)
      )
      return Effect.mapBoth(reading, outcomeOf(calls))
    }

    return ModelProvider.of({ identity, read: readEffect })
  })

/** The OpenAI-compatible provider: `OpenAiCompatible.layer(config)` provides `ModelProvider`. */
export const OpenAiCompatible = {
  make,
  layer: (config: OpenAiCompatibleConfig): Layer.Layer<ModelProvider> => Layer.effect(ModelProvider, make(config))
}
