/**
 * Retries that honour the upstream's `Retry-After` (seconds or an HTTP date), capped by the run's deadline: a wait
 * that would end past the deadline is not taken and the call fails at once with the last attempt's error. The
 * upstream is a tiny server of this file (the shared FakeUpstream sends no `Retry-After`), recording when each
 * request arrived; the waits are asserted from those times, with tolerance.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { assert, describe, it, layer } from "@effect/vitest"
import { Clock, Context, Effect, Layer, Metric } from "effect"
import { ModelProvider } from "../../src/providers/ModelProvider.js"
import { OpenAiCompatible } from "../../src/providers/OpenAiCompatible.js"
import { retryAfterMs } from "../../src/providers/UpstreamRetry.js"
import { choiceRead } from "../support/UpstreamProvider.js"

type Reply = { readonly status: number; readonly retryAfter?: string }

const completion = JSON.stringify({
  id: "chatcmpl-ra",
  object: "chat.completion",
  created: 0,
  model: "judge-ra",
  choices: [{
    index: 0,
    message: { role: "assistant", content: "A" },
    logprobs: { content: [{ token: "A", logprob: 0, bytes: [65], top_logprobs: [{ token: "A", logprob: 0, bytes: [65] }] }] },
    finish_reason: "length"
  }],
  usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 }
})

/** An upstream answering scripted statuses (with `Retry-After`), then 200; it records each request's arrival. */
class RetryUpstream extends Context.Service<RetryUpstream, {
  readonly url: string
  readonly script: (...replies: ReadonlyArray<Reply>) => Effect.Effect<void>
  readonly arrivals: Effect.Effect<ReadonlyArray<number>>
}>()("test/RetryUpstream") {
  static readonly layer = Layer.effect(
    RetryUpstream,
    Effect.gen(function*() {
      let queue: Array<Reply> = []
      let arrivals: Array<number> = []
      const server = http.createServer((request, response) => {
        request.resume()
        request.on("end", () => {
          arrivals.push(Date.now())
          const reply = queue.shift()
          if (reply === undefined) return void response.writeHead(200, { "content-type": "application/json" }).end(completion)
          const headers: Record<string, string> = { "content-type": "application/json" }
          if (reply.retryAfter !== undefined) headers["retry-after"] = reply.retryAfter
          response.writeHead(reply.status, headers).end(JSON.stringify({ error: { message: "scripted" } }))
        })
      })
      yield* Effect.acquireRelease(
        Effect.callback<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
        () => Effect.callback<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
      )
      const { port } = server.address() as AddressInfo
      return {
        url: `http://127.0.0.1:${port}/v1`,
        script: (...replies: ReadonlyArray<Reply>) =>
          Effect.sync(() => {
            queue = [...replies]
            arrivals = []
          }),
        arrivals: Effect.sync(() => [...arrivals])
      }
    })
  )
}

/** One read through the provider (5 ms backoff, 3 retries), due `deadlineInMs` from now. */
const readWith = (deadlineInMs: number) =>
  Effect.gen(function*() {
    const upstream = yield* RetryUpstream
    const provider = yield* OpenAiCompatible.make({
      baseUrl: upstream.url,
      apiKey: undefined,
      model: "judge-ra",
      retryBaseDelayMs: 5,
      maxRetries: 3
    })
    const deadline = (yield* Clock.currentTimeMillis) + deadlineInMs
    return yield* (provider as ModelProvider["Service"]).read(choiceRead, { deadline })
  }).pipe(Effect.scoped)

const gaps = (arrivals: ReadonlyArray<number>) => arrivals.slice(1).map((at, i) => at - arrivals[i]!)

const counterValue = (name: string, tags: Readonly<Record<string, string>>): number => {
  const snapshot = Metric.snapshotUnsafe(Context.empty()).find((s) =>
    s.id === name && Object.entries(tags).every(([key, value]) => s.attributes?.[key] === value)
  )
  return snapshot === undefined ? 0 : Number((snapshot.state as unknown as { count: number }).count)
}

describe("retryAfterMs", () => {
  it("reads delta-seconds and HTTP dates, and ignores anything else", () => {
    const now = Date.parse("Tue, 24 Nov 2026 06:00:00 GMT")
    assert.strictEqual(retryAfterMs("1", now), 1_000)
    assert.strictEqual(retryAfterMs(" 120 ", now), 120_000)
    assert.strictEqual(retryAfterMs("0", now), 0)
    assert.strictEqual(retryAfterMs("Tue, 24 Nov 2026 06:00:03 GMT", now), 3_000)
    assert.strictEqual(retryAfterMs("Tue, 24 Nov 2026 05:59:00 GMT", now), 0)
    assert.isUndefined(retryAfterMs(null, now))
    assert.isUndefined(retryAfterMs("soon", now))
    assert.isUndefined(retryAfterMs("-5", now))
  })
})

layer(RetryUpstream.layer, { excludeTestServices: true, timeout: "30 seconds" })("OpenAiCompatible: Retry-After", (it) => {
  it.effect("429 with Retry-After: 1 waits about a second before the retry, which answers", () =>
    Effect.gen(function*() {
      const upstream = yield* RetryUpstream
      const retriesBefore = counterValue("arbiter_upstream_retries_total", { reason: "retry_after" })
      yield* upstream.script({ status: 429, retryAfter: "1" })
      const outcome = yield* readWith(10_000)
      assert.deepStrictEqual(outcome.probabilities, [1, 0, 0])
      assert.deepStrictEqual(outcome.calls.map((call) => [call.retryOrdinal, call.status]), [[0, "failed"], [1, "succeeded"]])
      const [gap] = gaps(yield* upstream.arrivals)
      assert.isAtLeast(gap!, 950, "the retry waited for Retry-After")
      assert.isBelow(gap!, 3_000)
      assert.strictEqual(counterValue("arbiter_upstream_retries_total", { reason: "retry_after" }), retriesBefore + 1)
      assert.isAtLeast(counterValue("arbiter_upstream_calls_total", { model: "judge-ra", outcome: "rate_limited" }), 1)
      assert.isAtLeast(counterValue("arbiter_upstream_calls_total", { model: "judge-ra", outcome: "succeeded" }), 1)
    }))

  it.effect("503 with Retry-After: 1 waits about a second too", () =>
    Effect.gen(function*() {
      const upstream = yield* RetryUpstream
      yield* upstream.script({ status: 503, retryAfter: "1" })
      const outcome = yield* readWith(10_000)
      assert.strictEqual(outcome.calls.length, 2)
      const [gap] = gaps(yield* upstream.arrivals)
      assert.isAtLeast(gap!, 950)
      assert.isBelow(gap!, 3_000)
    }))

  it.effect("an HTTP-date Retry-After is waited for until that time", () =>
    Effect.gen(function*() {
      const upstream = yield* RetryUpstream
      // HTTP dates have whole seconds: two seconds ahead is 1 to 2 s from now.
      const at = new Date(Date.now() + 2_000).toUTCString()
      yield* upstream.script({ status: 429, retryAfter: at })
      const outcome = yield* readWith(10_000)
      assert.strictEqual(outcome.calls.length, 2)
      const arrivals = yield* upstream.arrivals
      assert.isAtLeast(arrivals[1]!, Math.floor(Date.parse(at) / 1000) * 1000 - 50, "not retried before the date")
      assert.isAtLeast(gaps(arrivals)[0]!, 900)
    }))

  it.effect("a Retry-After past the deadline is not waited for: the call fails at once with the upstream's error", () =>
    Effect.gen(function*() {
      const upstream = yield* RetryUpstream
      yield* upstream.script({ status: 429, retryAfter: "30" })
      const started = Date.now()
      const failure = yield* Effect.flip(readWith(2_000))
      const took = Date.now() - started
      assert.strictEqual(failure.error._tag, "provider_rate_limited")
      assert.strictEqual(failure.error.message, "the upstream model service rate-limited the call (1 attempt)")
      assert.deepStrictEqual(failure.calls.map((call) => call.status), ["failed"])
      assert.strictEqual((yield* upstream.arrivals).length, 1)
      assert.isBelow(took, 1_000, "no sleep towards the deadline")
    }))

  it.effect("a Retry-After shorter than the backoff, or unreadable, keeps the backoff", () =>
    Effect.gen(function*() {
      const upstream = yield* RetryUpstream
      yield* upstream.script({ status: 503, retryAfter: "0" }, { status: 503, retryAfter: "whenever" })
      const outcome = yield* readWith(10_000)
      assert.deepStrictEqual(outcome.calls.map((call) => call.status), ["failed", "failed", "succeeded"])
      for (const gap of gaps(yield* upstream.arrivals)) assert.isBelow(gap, 500)
    }))

  it.effect("Retry-After is capped by a deadline between waits: a second 1 s wait that would pass it is not taken", () =>
    Effect.gen(function*() {
      const upstream = yield* RetryUpstream
      yield* upstream.script({ status: 429, retryAfter: "1" }, { status: 429, retryAfter: "1" })
      const failure = yield* Effect.flip(readWith(1_600))
      assert.strictEqual(failure.error._tag, "provider_rate_limited")
      assert.strictEqual(failure.error.message, "the upstream model service rate-limited the call (2 attempts)")
      assert.strictEqual((yield* upstream.arrivals).length, 2, "no third attempt")
    }))
})
