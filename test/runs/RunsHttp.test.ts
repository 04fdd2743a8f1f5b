/**
 * `POST /v1/runs` end to end against a real OpenAI-compatible server: answers read from log-probabilities, usage,
 * exact costs, one ledger row per model call, Server-Timing, and the stored run readable through the other routes.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { call, codeOf } from "../support/Api.js"
import { FakeUpstream } from "../support/FakeUpstream.js"
import { assertMoneyInvariants, grantCredit } from "../support/Invariants.js"
import { oneQuestion, postRun, twoQuestions } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerWithUpstreamLive } from "../support/TestServer.js"

const RunIdPattern = /^run_[0-9a-f]{32}$/

layer(TestServerWithUpstreamLive(), { excludeTestServices: true, timeout: "120 seconds" })("runs", (it) => {
  describe("POST /v1/runs > 200", () => {
    it.effect("reads each answer from the first token's log-probabilities and bills each call exactly", () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, 1_000_000)
        yield* upstream.script(
          { kind: "logprobs", top: { B: 0.7, A: 0.2, C: 0.1 }, usage: { prompt_tokens: 1000, completion_tokens: 1 }, id: "chatcmpl-1" },
          { kind: "logprobs", top: { C: 0.6, B: 0.3, A: 0.1 }, usage: { prompt_tokens: 1000, completion_tokens: 1 }, id: "chatcmpl-2" }
        )
        const response = yield* postRun(organization.secret, twoQuestions(), "first-run")
        assert.strictEqual(response.status, 200, response.text)
        const run = response.json()
        assert.match(run.run_id, RunIdPattern)
        assert.strictEqual(run.state, "completed")
        assert.strictEqual(run.replayed, false)
        assert.strictEqual(run.decision.model, "decision-1")
        const topic = run.decision.answers.topic
        assert.strictEqual(topic.choice, "shipping")
        assert.closeTo(topic.probabilities.shipping, 0.7, 1e-9)
        assert.closeTo(topic.probabilities.billing, 0.2, 1e-9)
        const urgency = run.decision.answers.urgency
        assert.strictEqual(urgency.level, "high")
        assert.closeTo(urgency.score, (0.3 * 1 + 0.6 * 2) / 2, 1e-9)
        assert.deepStrictEqual(run.usage, { input_tokens: 2000, output_tokens: 2 })
        assert.strictEqual(run.cost_micros, 2 * (42 + 1), "1,000 input tokens cost 42, 1 output token rounds up to 1")
        assert.match(run.output_digest, /^[0-9a-f]{64}$/)
        assert.match(String(response.headers["server-timing"]), /admit;dur=[\d.]+, upstream;dur=[\d.]+, gateway;dur=[\d.]+, total;dur=[\d.]+/)

        const sql = yield* SqlClient.SqlClient
        const ledger = yield* sql<{ retry_ordinal: number; status: string; provider: string; model_id: string; provider_request_id: string; input_tokens: number; output_tokens: number; cost_micros: number }>`
          SELECT retry_ordinal, status, provider, model_id, provider_request_id, input_tokens, output_tokens, cost_micros
          FROM ledger_entries WHERE organization_id = ${organization.organizationId} ORDER BY provider_request_id`
        assert.deepStrictEqual(ledger, [
          { retry_ordinal: 0, status: "succeeded", provider: "openai", model_id: "decision-1", provider_request_id: "chatcmpl-1", input_tokens: 1000, output_tokens: 1, cost_micros: 43 },
          { retry_ordinal: 0, status: "succeeded", provider: "openai", model_id: "decision-1", provider_request_id: "chatcmpl-2", input_tokens: 1000, output_tokens: 1, cost_micros: 43 }
        ])
        const [account] = yield* sql<{ balance_micros: number; reserved_micros: number }>`
          SELECT balance_micros, (SELECT COALESCE(sum(hold_micros), 0)::int FROM runs r
            WHERE r.organization_id = a.organization_id AND r.held) AS reserved_micros
          FROM credit_accounts a WHERE organization_id = ${organization.organizationId}`
        assert.deepStrictEqual(account, { balance_micros: 1_000_000 - 86, reserved_micros: 0 })
        const requests = yield* upstream.requests
        assert.strictEqual(requests.length, 2)
        for (const request of requests) {
          assert.strictEqual(request.body.model, "judge-7b")
          assert.strictEqual(request.body.max_tokens, 1)
          assert.strictEqual(request.body.logprobs, true)
          assert.strictEqual(request.body.top_logprobs, 20)
          assert.strictEqual(request.body.temperature, 0)
        }
        yield* assertMoneyInvariants
      }))

    it.effect("the stored run reads the same through GET (both id spellings), the list and the stream", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const created = (yield* postRun(organization.secret, oneQuestion())).json()
        const hex = created.run_id.slice(4)
        const hyphenated = `run_${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
        for (const id of [created.run_id, hyphenated]) {
          const got = yield* call("GET", `/v1/runs/${id}`, { secret: organization.secret })
          assert.strictEqual(got.status, 200)
          assert.deepStrictEqual(got.json(), { ...created, replayed: true })
        }
        const list = yield* call("GET", "/v1/runs", { secret: organization.secret })
        assert.deepStrictEqual(list.json(), {
          runs: [{ run_id: created.run_id, kind: "decision", state: "completed", input_digest: created.input_digest, output_digest: created.output_digest, replayed: true }],
          limit: 20,
          offset: 0,
          next_cursor: null
        })
        const stream = yield* call("GET", `/v1/runs/${created.run_id}/stream`, { secret: organization.secret })
        assert.strictEqual(stream.status, 200)
        assert.match(String(stream.headers["content-type"]), /^text\/event-stream/)
        assert.strictEqual(stream.text, `event: run\ndata: ${JSON.stringify({ ...created, replayed: true })}\n\nevent: end\ndata: {}\n\n`)
      }))
  })

  describe("GET /v1/runs", () => {
    it.effect("newest first; limit clamped to 1-100 and echoed; offset; invalid_body for anything else", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const ids: Array<string> = []
        for (let i = 0; i < 3; i++) ids.push((yield* postRun(organization.secret, oneQuestion({ state: `ticket ${i}` }))).json().run_id)
        const page = yield* call("GET", "/v1/runs?limit=2&offset=1", { secret: organization.secret })
        assert.deepStrictEqual(page.json().runs.map((run: any) => run.run_id), [ids[1], ids[0]])
        for (const [query, limit] of [
          ["limit=-3", 1],
          ["limit=0", 1],
          ["limit=1000", 100],
          ["", 20],
          ["limit=99999999999999999999999", 100],
          ["limit=-99999999999999999999999", 1],
          ["limit=0000000000000000000000002", 2],
          [`limit=${"9".repeat(400)}`, 100],
          [`limit=-${"9".repeat(400)}`, 1]
        ] as const) {
          const clamped = yield* call("GET", `/v1/runs?${query}`, { secret: organization.secret })
          assert.strictEqual(clamped.status, 200, `${query}: ${clamped.text}`)
          assert.strictEqual(clamped.json().limit, limit, query)
        }
        // An offset past any run, of any length: an empty page; past 2^53 - 1 it is served and echoed as that.
        for (const [query, offset] of [
          ["offset=3", 3],
          ["offset=9007199254740991", 9007199254740991],
          ["offset=99999999999999999999", 9007199254740991],
          [`offset=${"9".repeat(400)}`, 9007199254740991],
          ["limit=100&offset=00000000000000000000000001", 1]
        ] as const) {
          const page = yield* call("GET", `/v1/runs?${query}`, { secret: organization.secret })
          assert.strictEqual(page.status, 200, `${query}: ${page.text}`)
          assert.strictEqual(page.json().offset, offset, query)
          assert.deepStrictEqual(page.json().runs.map((run: any) => run.run_id), offset === 1 ? [ids[1], ids[0]] : [], query)
        }
        for (const query of ["limit=2.5", "limit=abc", "offset=-1", "offset=1.5", "page=2", "limit=1&limit=2", "offset=-99999999999999999999", "limit=1e3", "limit=+5", "limit="]) {
          const refused = yield* call("GET", `/v1/runs?${query}`, { secret: organization.secret })
          assert.strictEqual(refused.status, 400, query)
          assert.strictEqual(codeOf(refused), "invalid_body", query)
        }
      }))
  })

  describe("GET /v1/runs/{run_id}", () => {
    it.effect("404 run_not_found for unknown, malformed and other organizations' runs", () =>
      Effect.gen(function*() {
        const mine = yield* seedOrganization()
        const theirs = yield* seedOrganization()
        const their = (yield* postRun(theirs.secret, oneQuestion())).json()
        for (const id of [their.run_id, `run_${"0".repeat(32)}`, "run_xyz", their.run_id.toUpperCase()]) {
          for (const suffix of ["", "/stream"]) {
            const response = yield* call("GET", `/v1/runs/${id}${suffix}`, { secret: mine.secret })
            assert.strictEqual(response.status, 404, id)
            assert.strictEqual(codeOf(response), "run_not_found", id)
          }
        }
      }))
  })
})
