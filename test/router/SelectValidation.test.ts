/**
 * `POST /v1/router/select` refusals, each with its status, `error.code` and `x-request-id`, and nothing stored or
 * charged after any of them: body shape (`invalid_body` for unknown keys at every depth, wrong types, out-of-range
 * values, an unknown task type, domain or latency, not exactly one of prompt and messages), `invalid_policy`,
 * `weights_require_balanced`, `unknown_model_id`, `no_eligible_model` before the classification,
 * `invalid_idempotency_key`, and the boundary's JSON rejections.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call, codeOf } from "../support/Api.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerLive } from "../support/TestServer.js"
import { postSelect, routerCounts } from "./fixtures/Select.js"

const task = { prompt: "Write a Python function that parses ISO 8601 dates." }

const expectRefused = (secret: string, body: unknown, status: number, code: string, mentions?: string, key: string | null = null) =>
  Effect.gen(function*() {
    const response = yield* postSelect(secret, body, key)
    const what = `${JSON.stringify(body).slice(0, 120)} -> ${response.text.slice(0, 200)}`
    assert.strictEqual(response.status, status, what)
    assert.strictEqual(codeOf(response), code, what)
    assert.match(String(response.headers["x-request-id"]), /^req_[0-9a-f]{32}$/)
    assert.strictEqual(response.json().error.request_id, response.headers["x-request-id"])
    if (mentions !== undefined) assert.include(response.json().error.message, mentions, what)
  })

layer(TestServerLive(), { excludeTestServices: true, timeout: "120 seconds" })("router select validation", (it) => {
  describe("POST /v1/router/select > 400 invalid_body", () => {
    it.effect("not exactly one of prompt and messages, or an empty one", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* seedOrganization()
        const messages = [{ role: "user", content: "hello" }]
        for (const body of [{}, { prompt: null }, { prompt: null, messages: null }, { prompt: "a", messages }]) {
          yield* expectRefused(secret, body, 400, "invalid_body", "exactly one of `prompt` and `messages`")
        }
        yield* expectRefused(secret, { messages: [] }, 400, "invalid_body", "messages")
        yield* expectRefused(secret, { prompt: "  \n" }, 400, "invalid_body", "prompt")
        assert.deepStrictEqual(yield* routerCounts(organizationId), { runs: 0, calls: 0, selections: 0, balance: 0 })
      }))

    it.effect("unknown keys at every depth, wrong types and out-of-range values name the field", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        const cases: ReadonlyArray<[unknown, string]> = [
          [{ ...task, colour: "red" }, "colour"],
          [{ ...task, models: { include: [], vendor: "x" } }, "vendor"],
          [{ ...task, weights: { quality: 1, luck: 1 } }, "luck"],
          [{ messages: [{ role: "user", content: "hi", name: "bob" }] }, "name"],
          [{ messages: [{ role: "system", content: "hi" }] }, "role"],
          [{ prompt: 42 }, "prompt"],
          [{ ...task, latency: "realtime" }, "latency"],
          [{ ...task, max_latency_ms: 0 }, "max_latency_ms"],
          [{ ...task, max_latency_ms: -5 }, "max_latency_ms"],
          [{ ...task, weights: { quality: -1 } }, "quality"],
          [{ ...task, models: { max_price_per_mtok: -0.5 } }, "max_price_per_mtok"],
          [{ ...task, models: { min_context_tokens: 1.5 } }, "min_context_tokens"],
          [{ ...task, models: { min_context_tokens: -1 } }, "min_context_tokens"],
          [{ ...task, models: { modalities: ["smell"] } }, "modalities"],
          [{ ...task, models: { open_weights: "yes" } }, "open_weights"],
          [{ ...task, models: { include: "openai/gpt-5.5" } }, "include"],
          [{ ...task, task_type: "coding.everything" }, "task_type"],
          [{ ...task, domain: "cooking" }, "domain"]
        ]
        for (const [body, field] of cases) yield* expectRefused(secret, body, 400, "invalid_body", field)
      }))

    it.effect("malformed JSON, a missing content type and a query string are JSON invalid_body; over 4 MiB is 413", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        for (const options of [{ rawBody: "{" }, { rawBody: "" }]) {
          const response = yield* call("POST", "/v1/router/select", { secret, ...options })
          assert.strictEqual(response.status, 400)
          assert.strictEqual(codeOf(response), "invalid_body")
        }
        const untyped = yield* call("POST", "/v1/router/select", {
          secret,
          rawBody: JSON.stringify(task),
          headers: { "content-type": "text/plain" }
        })
        assert.strictEqual(codeOf(untyped), "invalid_body")
        const query = yield* call("POST", "/v1/router/select?policy=balanced", { secret, body: task })
        assert.strictEqual(query.status, 400)
        assert.strictEqual(codeOf(query), "invalid_body")
        const huge = yield* postSelect(secret, { prompt: "x".repeat(4 * 1024 * 1024) })
        assert.strictEqual(huge.status, 413)
        assert.strictEqual(codeOf(huge), "body_too_large")
      }))
  })

  describe("POST /v1/router/select > 400 router codes", () => {
    it.effect("invalid_policy for anything but the four policies", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        for (const policy of ["cheapest", "Balanced", ""]) {
          yield* expectRefused(secret, { ...task, policy }, 400, "invalid_policy", "balanced, cost_efficient")
        }
      }))

    it.effect("weights_require_balanced: weights with another policy (balanced, default or explicit, accepts them)", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        for (const policy of ["cost_efficient", "capability_heavy", "domain_skills"]) {
          yield* expectRefused(secret, { ...task, policy, weights: { quality: 1 } }, 400, "weights_require_balanced", policy)
        }
        for (const extra of [{}, { policy: "balanced" }, { policy: null }]) {
          const accepted = yield* postSelect(secret, { ...task, ...extra, weights: { quality: 2, cost: 1, speed: 1 } })
          assert.strictEqual(accepted.status, 200, accepted.text)
        }
      }))

    it.effect("unknown_model_id names an include or exclude id absent from the catalog", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        yield* expectRefused(secret, { ...task, models: { include: ["openai/gpt-5.5", "acme/nope"] } }, 400, "unknown_model_id", "acme/nope")
        yield* expectRefused(secret, { ...task, models: { exclude: ["acme/other"] } }, 400, "unknown_model_id", "models.exclude")
      }))

    it.effect("no_eligible_model when the filters leave nothing: refused before the classification, nothing charged", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* seedOrganization()
        yield* expectRefused(
          secret,
          { ...task, models: { providers: ["openai"], open_weights: true, max_price_per_mtok: 0.01 } },
          400,
          "no_eligible_model",
          "max_price_per_mtok removed 2"
        )
        yield* expectRefused(secret, { ...task, max_latency_ms: 1 }, 400, "no_eligible_model", "max_latency_ms")
        yield* expectRefused(secret, { ...task, task_type: "math.competition", max_latency_ms: 1_000 }, 400, "no_eligible_model")
        assert.deepStrictEqual(yield* routerCounts(organizationId), { runs: 0, calls: 0, selections: 0, balance: 0 })
      }))

    it.effect("invalid_idempotency_key: empty, over 255 bytes or not visible ASCII", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* seedOrganization()
        for (const key of ["", "a".repeat(256), "has space", "caf\u00e9"]) {
          yield* expectRefused(secret, task, 400, "invalid_idempotency_key", undefined, key)
        }
        assert.strictEqual((yield* routerCounts(organizationId)).runs, 0)
      }))
  })
})
