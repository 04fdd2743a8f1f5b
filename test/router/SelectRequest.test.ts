/**
 * The select request's own checks as a pure function (`checkSelectRequest`): the order in which problems are
 * reported, the values a checked request carries, and the digest law (an omitted field, its null and its explicit
 * default are the same body; any other change is another body). Also the filters' pre-check of `Eligibility.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"
import type { SelectRequest } from "../../schema/RouterApi.js"
import { checkEligibility, lowestOutputTokens } from "../../src/router/Eligibility.js"
import { checkSelectRequest, type SelectionRequest } from "../../src/router/SelectRequest.js"
import { realCatalog, realTaxonomy } from "./fixtures/RouterFixtures.js"

const data = { catalog: realCatalog, taxonomy: realTaxonomy }

const check = (request: SelectRequest) => checkSelectRequest(request, data)

const checked = (request: SelectRequest): SelectionRequest => Result.getOrThrow(check(request))

const codeOf = (request: SelectRequest): string =>
  Result.match(check(request), { onFailure: (error) => error._tag, onSuccess: () => "ok" })

describe("checkSelectRequest", () => {
  it("reports the first problem in order: prompt, policy, task_type, domain, weights, model ids", () => {
    const everything: SelectRequest = {
      policy: "fastest",
      task_type: "nope",
      domain: "nope",
      weights: { quality: 1 },
      models: { include: ["acme/x"] }
    }
    assert.strictEqual(codeOf(everything), "invalid_body")
    assert.strictEqual(codeOf({ ...everything, prompt: "p" }), "invalid_policy")
    assert.strictEqual(codeOf({ ...everything, prompt: "p", policy: "domain_skills" }), "invalid_body")
    assert.include(Result.flip(check({ ...everything, prompt: "p", policy: "domain_skills" })).pipe(Result.getOrThrow).message, "task_type")
    const domainFirst = check({ ...everything, prompt: "p", policy: "domain_skills", task_type: "coding.debugging" })
    assert.include(Result.getOrThrow(Result.flip(domainFirst)).message, "domain")
    assert.strictEqual(codeOf({ ...everything, prompt: "p", policy: "domain_skills", task_type: null, domain: null }), "weights_require_balanced")
    assert.strictEqual(codeOf({ prompt: "p", models: { include: ["acme/x"] } }), "unknown_model_id")
    assert.strictEqual(codeOf({ prompt: "p", models: { exclude: ["acme/x"] } }), "unknown_model_id")
  })

  it("carries the defaults, the fixed task, the filters and ceil(UTF-8 bytes / 4) of the whole task", () => {
    const request = checked({ prompt: "héllo wörld", task_type: "coding.debugging", domain: "math" })
    assert.strictEqual(request.policy, "balanced")
    assert.strictEqual(request.latency, "standard")
    assert.isNull(request.weights)
    assert.isNull(request.maxLatencyMs)
    assert.deepStrictEqual(request.fixed, { taskType: "coding.debugging", domain: "math" })
    assert.strictEqual(request.inputTokensEst, Math.ceil(13 / 4))
    const turns = checked({ messages: [{ role: "user", content: "Fix this" }, { role: "assistant", content: "Which file?" }] })
    assert.strictEqual(turns.text, "user: Fix this\n\nassistant: Which file?")
    assert.deepStrictEqual(checked({ prompt: "p", weights: { quality: 2 } }).weights, { quality: 2, cost: 0, speed: 0 })
  })

  it("the digest: nulls, omissions and explicit defaults match; any other change does not", () => {
    const base = checked({ prompt: "Summarize the report." }).digest
    const same: ReadonlyArray<SelectRequest> = [
      { prompt: "Summarize the report.", messages: null, policy: null, latency: null, models: null, weights: null },
      { prompt: "Summarize the report.", policy: "balanced", latency: "standard" },
      { prompt: "Summarize the report.", models: {}, weights: {} },
      { prompt: "Summarize the report.", models: { open_weights: null, max_price_per_mtok: null } }
    ]
    for (const request of same) assert.strictEqual(checked(request).digest, base, JSON.stringify(request))
    const other: ReadonlyArray<SelectRequest> = [
      { prompt: "Summarize the report!" },
      { prompt: "Summarize the report.", policy: "cost_efficient" },
      { prompt: "Summarize the report.", latency: "batch" },
      { prompt: "Summarize the report.", max_latency_ms: 5000 },
      { prompt: "Summarize the report.", models: { open_weights: false } },
      { prompt: "Summarize the report.", weights: { quality: 1 } },
      { prompt: "Summarize the report.", domain: "writing" },
      { messages: [{ role: "user", content: "Summarize the report." }] }
    ]
    const digests = new Set(other.map((request) => checked(request).digest))
    assert.strictEqual(digests.size, other.length)
    assert.isFalse(digests.has(base))
  })

  it("law: the digest ignores key order and null members", () =>
    fc.assert(fc.property(
      fc.string({ minLength: 1 }).filter((s) => s.trim() !== ""),
      fc.constantFrom("balanced", "cost_efficient", "capability_heavy", "domain_skills"),
      fc.option(fc.double({ min: 1, max: 1e6, noNaN: true }), { nil: null }),
      (prompt, policy, maxLatency) => {
        const forward: SelectRequest = { prompt, policy, max_latency_ms: maxLatency, domain: null }
        const backward: SelectRequest = { domain: null, max_latency_ms: maxLatency, policy, prompt }
        const bare: SelectRequest = maxLatency === null ? { prompt, policy } : { prompt, policy, max_latency_ms: maxLatency }
        const digest = checked(forward).digest
        return digest === checked(backward).digest && digest === checked(bare).digest
      }
    )))
})

describe("checkEligibility", () => {
  it("uses the shortest answer of any task type, or the fixed type's exactly", () => {
    const shortest = Math.min(...realTaxonomy.taskTypes.map((type) => type.expectedOutputTokens))
    assert.strictEqual(lowestOutputTokens(realTaxonomy, checked({ prompt: "p" })), shortest)
    assert.strictEqual(lowestOutputTokens(realTaxonomy, checked({ prompt: "p", task_type: "math.research_proofs" })), 5000)
    assert.strictEqual(lowestOutputTokens(realTaxonomy, checked({ prompt: "p", domain: "writing" })), 700)
  })

  it("refuses only when no model can pass for any classification, naming what each filter removed", () => {
    assert.isTrue(Result.isSuccess(checkEligibility(data, checked({ prompt: "p", models: { providers: ["mistral"] } }))))
    const refused = checkEligibility(data, checked({ prompt: "p", models: { providers: ["mistral"], min_context_tokens: 10_000_000 } }))
    const message = Result.getOrThrow(Result.flip(refused)).message
    assert.strictEqual(message, `no model passes the filters (providers removed ${realCatalog.models.length - 4}, min_context_tokens removed 4)`)
  })
})
