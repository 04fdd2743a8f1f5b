import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { assert, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import type { ModelCall, Read } from "../../src/providers/ModelProvider.js"
import { FakeUpstream } from "../support/FakeUpstream.js"
import { choiceRead as read, readThroughUpstream } from "../support/UpstreamProvider.js"
import type { UpstreamProviderConfig } from "../support/UpstreamProvider.js"


/** A read through a provider holding the key "sk-test". */
const readWith = (input: Read, config: UpstreamProviderConfig = {}) =>
  readThroughUpstream(input, { apiKey: Redacted.make("sk-test"), ...config })

const shape = (calls: ReadonlyArray<ModelCall>) =>
  calls.map(({ at: _at, ...call }) => call)

layer(FakeUpstream.layer, { excludeTestServices: true })("OpenAiCompatible: requests, readout and spans", (it) => {
  it.effect("happy path: probabilities from logprobs, usage and the request id", () =>
    Effect.gen(function*() {
      const upstream = yield* FakeUpstream
      yield* upstream.reset
      yield* upstream.script({
        kind: "logprobs",
        top: { B: 0.6, A: 0.25, " C": 0.1, Hello: 0.05 },
        usage: { prompt_tokens: 321, completion_tokens: 1 },
        id: "chatcmpl-abc"
      })
      const outcome = yield* readWith(read)
      assert.closeTo(outcome.probabilities[0]!, 0.25 / 0.95, 1e-9)
      assert.closeTo(outcome.probabilities[1]!, 0.6 / 0.95, 1e-9)
      assert.closeTo(outcome.probabilities[2]!, 0.1 / 0.95, 1e-9)
      assert.deepStrictEqual(shape(outcome.calls), [
        { retryOrdinal: 0, status: "succeeded", inputTokens: 321, outputTokens: 1, providerRequestId: "chatcmpl-abc", purpose: "answer" }
      ])
      assert.instanceOf(outcome.calls[0]!.at, Date)
      const [request] = yield* upstream.requests
      assert.strictEqual(request!.method, "POST")
      assert.strictEqual(request!.path, "/v1/chat/completions")
      assert.strictEqual(request!.headers["authorization"], "Bearer sk-test")
      assert.strictEqual(request!.headers["content-type"], "application/json")
      assert.strictEqual(request!.body.model, "judge-7b")
      assert.strictEqual(request!.body.max_tokens, 1)
      assert.strictEqual(request!.body.logprobs, true)
      assert.strictEqual(request!.body.top_logprobs, 20)
      assert.strictEqual(request!.body.temperature, 0)
      assert.include(request!.body.messages[0].content, "order 1182: refund requested for a damaged lamp")
      assert.include(request!.body.messages[0].content, "A. billing\nB. support\nC. sales")
    }))

  it.effect("sends no authorization header without a key and accepts a base URL with a trailing slash", () =>
    Effect.gen(function*() {
      const upstream = yield* FakeUpstream
      yield* upstream.reset
      yield* readWith(read, { apiKey: undefined, baseUrl: `${upstream.url}/` })
      const [request] = yield* upstream.requests
      assert.isUndefined(request!.headers["authorization"])
      assert.strictEqual(request!.path, "/v1/chat/completions")
    }))

  it.effect("no logprobs: decision_unavailable with a succeeded, billed call and no retry", () =>
    Effect.gen(function*() {
      const upstream = yield* FakeUpstream
      yield* upstream.reset
      yield* upstream.script({ kind: "noLogprobs", usage: { prompt_tokens: 77, completion_tokens: 1 }, id: "chatcmpl-n" })
      const failure = yield* Effect.flip(readWith(read))
      assert.strictEqual(failure.error._tag, "decision_unavailable")
      assert.deepStrictEqual(shape(failure.calls), [
        { retryOrdinal: 0, status: "succeeded", inputTokens: 77, outputTokens: 1, providerRequestId: "chatcmpl-n", purpose: "answer" }
      ])
      assert.strictEqual((yield* upstream.requests).length, 1)
    }))

  it.effect("a 200 whose top tokens hold none of the letters: decision_unavailable", () =>
    Effect.gen(function*() {
      const upstream = yield* FakeUpstream
      yield* upstream.reset
      yield* upstream.script({ kind: "logprobs", top: { Hello: 0.7, The: 0.3 } })
      const failure = yield* Effect.flip(readWith(read))
      assert.strictEqual(failure.error._tag, "decision_unavailable")
      assert.strictEqual(failure.calls[0]!.status, "succeeded")
      assert.isAbove(failure.calls[0]!.inputTokens, 0)
    }))

  it.effect("think tokens: a thought call then a letter call carrying it, each a ledger entry", () =>
    Effect.gen(function*() {
      const upstream = yield* FakeUpstream
      yield* upstream.reset
      yield* upstream.script(
        { kind: "thought", text: "A refund is money.", usage: { prompt_tokens: 100, completion_tokens: 5 }, id: "t-1" },
        { kind: "logprobs", top: { A: 0.8, B: 0.2 }, usage: { prompt_tokens: 120, completion_tokens: 1 }, id: "l-1" }
      )
      const outcome = yield* readWith({ ...read, thinkTokens: 32 })
      assert.deepStrictEqual(shape(outcome.calls), [
        { retryOrdinal: 0, status: "succeeded", inputTokens: 100, outputTokens: 5, providerRequestId: "t-1", purpose: "think" },
        { retryOrdinal: 0, status: "succeeded", inputTokens: 120, outputTokens: 1, providerRequestId: "l-1", purpose: "answer" }
      ])
      const [think, letter] = yield* upstream.requests
      assert.strictEqual(think!.body.max_tokens, 32)
      assert.isUndefined(think!.body.logprobs)
      assert.strictEqual(letter!.body.max_tokens, 1)
      assert.strictEqual(letter!.body.messages[1].role, "assistant")
      assert.strictEqual(letter!.body.messages[1].content, "A refund is money.")
    }))

  it.effect("one model.call span per attempt, with provider, model, retry ordinal and tokens, and no prompt text", () =>
    Effect.gen(function*() {
      const upstream = yield* FakeUpstream
      yield* upstream.reset
      yield* upstream.script(
        { kind: "status", status: 503 },
        { kind: "logprobs", top: { A: 1 }, usage: { prompt_tokens: 64, completion_tokens: 1 } }
      )
      const exporter = new InMemorySpanExporter()
      // Read the spans before the layer closes: shutting the exporter down clears them.
      const spans = yield* readWith(read).pipe(
        Effect.andThen(Effect.sync(() => exporter.getFinishedSpans().filter((span) => span.name === "model.call"))),
        Effect.provide(NodeSdk.layer(() => ({
          resource: { serviceName: "test" },
          spanProcessor: new SimpleSpanProcessor(exporter)
        })))
      )
      assert.deepStrictEqual(spans.map((span) => span.attributes), [
        {
          "model.provider": "openai",
          "model.id": "judge-7b",
          "model.retry_ordinal": 0,
          "model.purpose": "answer",
          "model.input_tokens": 0,
          "model.output_tokens": 0
        },
        {
          "model.provider": "openai",
          "model.id": "judge-7b",
          "model.retry_ordinal": 1,
          "model.purpose": "answer",
          "model.input_tokens": 64,
          "model.output_tokens": 1
        }
      ])
    }))
})
