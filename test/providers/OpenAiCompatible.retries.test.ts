import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ProviderFailure } from "../../src/providers/ModelProvider.js"
import type { ModelCall } from "../../src/providers/ModelProvider.js"
import { FakeUpstream } from "../support/FakeUpstream.js"
import { choiceRead as read, readThroughUpstream } from "../support/UpstreamProvider.js"

const shape = (calls: ReadonlyArray<ModelCall>) =>
  calls.map(({ at: _at, ...call }) => call)

layer(FakeUpstream.layer, { excludeTestServices: true })("OpenAiCompatible: retries and failures", (it) => {
  it.effect("an answer at once: one ledger entry with its tokens and request id", () =>
    Effect.gen(function*() {
      const upstream = yield* FakeUpstream
      yield* upstream.reset
      yield* upstream.script({ kind: "logprobs", top: { B: 1 }, usage: { prompt_tokens: 70, completion_tokens: 1 }, id: "chatcmpl-1" })
      const outcome = yield* readThroughUpstream(read)
      assert.deepStrictEqual(outcome.probabilities, [0, 1, 0])
      assert.deepStrictEqual(shape(outcome.calls), [
        { retryOrdinal: 0, status: "succeeded", inputTokens: 70, outputTokens: 1, providerRequestId: "chatcmpl-1", purpose: "answer" }
      ])
    }))

  it.effect("429 then success: two ledger entries, retry ordinals 0 and 1", () =>
    Effect.gen(function*() {
      const upstream = yield* FakeUpstream
      yield* upstream.reset
      yield* upstream.script({ kind: "status", status: 429 }, {
        kind: "logprobs",
        top: { A: 1 },
        usage: { prompt_tokens: 50, completion_tokens: 1 },
        id: "chatcmpl-2"
      })
      const outcome = yield* readThroughUpstream(read)
      assert.deepStrictEqual(outcome.probabilities, [1, 0, 0])
      assert.deepStrictEqual(shape(outcome.calls), [
        { retryOrdinal: 0, status: "failed", inputTokens: 0, outputTokens: 0, providerRequestId: "req-fake-1", purpose: "answer" },
        { retryOrdinal: 1, status: "succeeded", inputTokens: 50, outputTokens: 1, providerRequestId: "chatcmpl-2", purpose: "answer" }
      ])
      assert.strictEqual((yield* upstream.requests).length, 2)
    }))

  it.effect("429 forever: provider_rate_limited after the retries, every entry failed with no tokens", () =>
    Effect.gen(function*() {
      const upstream = yield* FakeUpstream
      yield* upstream.reset
      yield* upstream.respondWith(() => ({ kind: "status", status: 429 }))
      const failure = yield* Effect.flip(readThroughUpstream(read, { maxRetries: 3 }))
      assert.instanceOf(failure, ProviderFailure)
      assert.strictEqual(failure.error._tag, "provider_rate_limited")
      assert.strictEqual(failure.error.message, "the upstream model service rate-limited the call (4 attempts)")
      assert.deepStrictEqual(failure.calls.map((call) => call.retryOrdinal), [0, 1, 2, 3])
      assert.isTrue(failure.calls.every((call) => call.status === "failed" && call.inputTokens === 0 && call.outputTokens === 0))
      assert.strictEqual((yield* upstream.requests).length, 4)
    }))

  it.effect("500 forever: provider_unavailable", () =>
    Effect.gen(function*() {
      const upstream = yield* FakeUpstream
      yield* upstream.reset
      yield* upstream.respondWith(() => ({ kind: "status", status: 500 }))
      const failure = yield* Effect.flip(readThroughUpstream(read, { maxRetries: 2 }))
      assert.strictEqual(failure.error._tag, "provider_unavailable")
      assert.strictEqual(failure.error.message, "the upstream model service failed: status 500 (3 attempts)")
      assert.deepStrictEqual(failure.calls.map((call) => [call.retryOrdinal, call.status]), [[0, "failed"], [1, "failed"], [2, "failed"]])
    }))

  it.effect("a hang past the deadline: deadline_exceeded, one failed entry", () =>
    Effect.gen(function*() {
      const upstream = yield* FakeUpstream
      yield* upstream.reset
      yield* upstream.script({ kind: "hang" })
      const failure = yield* Effect.flip(readThroughUpstream(read, { deadlineInMs: 300 }))
      assert.strictEqual(failure.error._tag, "deadline_exceeded")
      assert.strictEqual(failure.error.message, "the run's deadline passed during a model call")
      assert.deepStrictEqual(failure.calls.map((call) => [call.retryOrdinal, call.status]), [[0, "failed"]])
    }))

  it.effect("an attempt timeout before the deadline is retried", () =>
    Effect.gen(function*() {
      const upstream = yield* FakeUpstream
      yield* upstream.reset
      yield* upstream.script({ kind: "hang", ms: 2_000 }, { kind: "logprobs", top: { C: 1 } })
      const outcome = yield* readThroughUpstream(read, { attemptTimeoutMs: 150 })
      assert.deepStrictEqual(outcome.probabilities, [0, 0, 1])
      assert.deepStrictEqual(outcome.calls.map((call) => [call.retryOrdinal, call.status]), [[0, "failed"], [1, "succeeded"]])
    }))

  it.effect("malformed JSON: provider_bad_response after retries", () =>
    Effect.gen(function*() {
      const upstream = yield* FakeUpstream
      yield* upstream.reset
      yield* upstream.respondWith(() => ({ kind: "malformed" }))
      const failure = yield* Effect.flip(readThroughUpstream(read, { maxRetries: 1 }))
      assert.strictEqual(failure.error._tag, "provider_bad_response")
      assert.strictEqual(
        failure.error.message,
        "the upstream model service returned an unreadable response: the body is not JSON (2 attempts)"
      )
      assert.isTrue(failure.calls.every((call) => call.status === "failed" && call.inputTokens === 0))
      assert.strictEqual(failure.calls.length, 2)
    }))

  it.effect("a body without usage is unreadable and retried", () =>
    Effect.gen(function*() {
      const upstream = yield* FakeUpstream
      yield* upstream.reset
      yield* upstream.script({ kind: "noUsage" }, { kind: "logprobs", top: { A: 1 } })
      const outcome = yield* readThroughUpstream(read)
      assert.deepStrictEqual(outcome.calls.map((call) => call.status), ["failed", "succeeded"])
    }))

  it.effect("a context-length 400: input_too_large, not retried", () =>
    Effect.gen(function*() {
      const upstream = yield* FakeUpstream
      yield* upstream.reset
      yield* upstream.script({
        kind: "status",
        status: 400,
        body: JSON.stringify({ error: { message: "This model's maximum context length is 8192 tokens", code: "context_length_exceeded" } })
      })
      const failure = yield* Effect.flip(readThroughUpstream(read))
      assert.strictEqual(failure.error._tag, "input_too_large")
      assert.strictEqual(failure.calls.length, 1)
      assert.strictEqual(failure.calls[0]!.status, "failed")
    }))

  it.effect("a 401: provider_unavailable, not retried", () =>
    Effect.gen(function*() {
      const upstream = yield* FakeUpstream
      yield* upstream.reset
      yield* upstream.respondWith(() => ({ kind: "status", status: 401 }))
      const failure = yield* Effect.flip(readThroughUpstream(read))
      assert.strictEqual(failure.error._tag, "provider_unavailable")
      assert.strictEqual(failure.error.message, "the upstream model service refused the call with status 401")
      assert.strictEqual((yield* upstream.requests).length, 1)
    }))

  it.effect("a dropped connection then success is retried", () =>
    Effect.gen(function*() {
      const upstream = yield* FakeUpstream
      yield* upstream.reset
      yield* upstream.script({ kind: "drop" }, { kind: "logprobs", top: { B: 1 } })
      const outcome = yield* readThroughUpstream(read)
      assert.deepStrictEqual(outcome.probabilities, [0, 1, 0])
      assert.deepStrictEqual(outcome.calls.map((call) => call.status), ["failed", "succeeded"])
    }))

  it.effect("connection refused: provider_unavailable", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(() =>
        new Promise<number>((resolve) => {
          const server = http.createServer()
          server.listen(0, "127.0.0.1", () => {
            const { port } = server.address() as AddressInfo
            server.close(() => resolve(port))
          })
        })
      )
      const failure = yield* Effect.flip(readThroughUpstream(read, { baseUrl: `http://127.0.0.1:${port}/v1`, maxRetries: 1 }))
      assert.strictEqual(failure.error._tag, "provider_unavailable")
      assert.strictEqual(failure.error.message, "the upstream model service failed: connection failed (ECONNREFUSED) (2 attempts)")
      assert.strictEqual(failure.calls.length, 2)
    }))
})
