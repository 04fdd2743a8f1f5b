/**
 * The official typed client (`@arbiter/client`, from its source in packages/client/src/) against a live server: every
 * refusal decodes to the class of its own code, with the response's request id (several codes share a status, and a
 * client decoding them all as the first of that status would answer `idempotency_key_required` as `invalid_body`),
 * and plain-text rejections to their own rejection class; `npm run client:example` runs the README's example from
 * the package's source. The packed package, installed outside the repository, is test/client/Package.test.ts.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Result } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import type { Scope } from "../../schema/Scope.js"
import { ArbiterClient, type ArbiterClientShape } from "../../packages/client/src/index.js"
import { ServerAddress } from "../../src/server/Listen.js"
import { call } from "../support/Api.js"
import { seedKey, seedOrganization } from "../support/Seed.js"
import { TestServerLive } from "../support/TestServer.js"

const root = fileURLToPath(new URL("../../", import.meta.url))
const ExamplePath = "packages/client/examples/quickstart.ts"

/** A client for a key; `alter` changes each request on the wire (what the typed client cannot send by itself). */
const clientFor = (apiKey: string, alter?: (request: HttpClientRequest.HttpClientRequest) => HttpClientRequest.HttpClientRequest) =>
  Effect.gen(function*() {
    const address = yield* ServerAddress
    // The raw client: the test layer's HttpClient already prepends the server's address, which the client does itself.
    const http = yield* Effect.provide(Effect.service(HttpClient.HttpClient), FetchHttpClient.layer)
    return yield* ArbiterClient.make({ baseUrl: address.url, apiKey }).pipe(
      // The alteration runs last, after the client's own (base address, bearer credential), as a proxy would.
      Effect.provideService(
        HttpClient.HttpClient,
        alter === undefined ? http : HttpClient.make((request) => http.execute(alter(request)))
      )
    )
  })

/** The request without one header. */
const withoutHeader = (name: string) => (request: HttpClientRequest.HttpClientRequest) =>
  HttpClientRequest.removeHeader(request, name)

/** What a call failed with: the decoded error's tag and request id. */
const refusal = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.result(effect), (result) =>
    Result.isSuccess(result)
      ? { tag: "succeeded", requestId: undefined }
      : { tag: result.failure._tag, requestId: (result.failure as { readonly request_id?: string }).request_id })

const decision = {
  kind: "decision" as const,
  state: { ticket: "The invoice shows a charge I do not recognise." },
  questions: { topic: { type: "choice", instructions: "Topic?", criteria: { billing: null, shipping: null } } }
}

const task = { prompt: "Translate this paragraph into German.", policy: "balanced" }

const run = (client: ArbiterClientShape, key: string, payload: typeof decision | Record<string, unknown> = decision) =>
  client.runs.create({ headers: { "idempotency-key": key }, payload: payload as typeof decision })

/** Runs a command in the project folder; resolves with its output. */
const exec = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.callback<{ readonly stdout: string; readonly stderr: string }, Error>((resume) => {
    execFile(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, timeout: 120_000 }, (error, stdout, stderr) =>
      resume(error === null ? Effect.succeed({ stdout, stderr }) : Effect.fail(new Error(`${error.message}\n${stderr}`))))
  })

layer(TestServerLive(), { excludeTestServices: true, timeout: "180 seconds" })("@arbiter/client", (it) => {
  describe("refusals", () => {
    it.effect("decode to the class of their own code, with the response's request id", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const { secret } = organization
        const scoped = (scopes: ReadonlyArray<Scope>) =>
          Effect.map(seedKey(organization.organizationId, organization.ownerId, scopes), (key) => key.secret)
        const owner = yield* clientFor(secret)
        const withoutKey = yield* clientFor(secret, withoutHeader("idempotency-key"))
        const traced = yield* clientFor(secret, HttpClientRequest.setHeader("x-request-id", "client-test.1"))
        const reader = yield* clientFor(yield* scoped(["runs_read", "keys_read"]))
        const keyWriter = yield* clientFor(yield* scoped(["keys_write"]))
        const anonymous = yield* clientFor(secret, withoutHeader("authorization"))
        const stranger = yield* clientFor(`otsk_${"0".repeat(64)}`)
        const billed = yield* clientFor((yield* seedOrganization({ billing: true })).secret)
        const badBody = yield* clientFor(secret, HttpClientRequest.bodyJsonUnsafe({ kind: "opinion" }))
        const extraQuery = yield* clientFor(secret, HttpClientRequest.appendUrlParam("colour", "blue"))
        const extraField = yield* clientFor(secret, HttpClientRequest.bodyJsonUnsafe({ name: "x", scopes: [], colour: 1 }))
        const brokenJson = yield* clientFor(secret, HttpClientRequest.bodyText("{", "application/json"))
        const textBody = yield* clientFor(secret, HttpClientRequest.bodyText("{}", "text/plain"))
        const hugeBody = yield* clientFor(secret, HttpClientRequest.bodyText(" ".repeat(1024 * 1024 + 1), "application/json"))

        yield* run(owner, "conflicting")
        const revoked = yield* owner.keys.create({ payload: { name: "gone", scopes: ["runs_read"] } })
        yield* owner.keys.revoke({ params: { key_id: revoked.id } })

        const cases: ReadonlyArray<readonly [string, Effect.Effect<{ tag: string; requestId: string | undefined }>]> = [
          ["invalid_body", refusal(run(badBody, "body"))],
          ["idempotency_key_required", refusal(run(withoutKey, "never-sent"))],
          ["invalid_idempotency_key", refusal(run(owner, ""))],
          ["unknown_model", refusal(run(owner, "model", { ...decision, model: "gpt-nothing" }))],
          ["invalid_decision_questions", refusal(run(owner, "questions", { ...decision, questions: {} }))],
          ["missing_credentials", refusal(anonymous.keys.list())],
          ["invalid_credential", refusal(stranger.keys.list())],
          ["insufficient_credits", refusal(run(billed, "credit"))],
          ["scope_denied", refusal(run(reader, "scope"))],
          ["scope_exceeds_creator", refusal(keyWriter.keys.create({ payload: { name: "more", scopes: ["runs_write"] } }))],
          ["run_not_found", refusal(owner.runs.get({ params: { run_id: `run_${"0".repeat(32)}` } }))],
          ["key_not_found", refusal(reader.keys.get({ params: { key_id: `key_${"0".repeat(32)}` } }))],
          ["idempotency_conflict", refusal(run(owner, "conflicting", { ...decision, state: { ticket: "other" } }))],
          ["key_revoked", refusal(owner.keys.rotate({ params: { key_id: revoked.id } }))],
          ["empty_scopes", refusal(owner.keys.create({ payload: { name: "none", scopes: [] } }))],
          ["invalid_policy", refusal(owner.router.select({ headers: {}, payload: { ...task, policy: "cheapest" } }))],
          [
            "weights_require_balanced",
            refusal(owner.router.select({ headers: {}, payload: { ...task, policy: "cost_efficient", weights: { cost: 1 } } }))
          ],
          [
            "unknown_model_id",
            refusal(owner.router.select({ headers: {}, payload: { ...task, models: { include: ["nobody/nothing"] } } }))
          ],
          [
            "no_eligible_model",
            refusal(owner.router.select({ headers: {}, payload: { ...task, models: { providers: ["nobody"] } } }))
          ],
          ["invalid_parameter", refusal(owner.usage.rollup({ query: { start_at: "2026-11-01T00:00:00Z" } }))],
          ["invalid_amount", refusal(owner.billing.checkout({ payload: { amount_micros: 1 } }))],
          [
            "payment_method_required",
            refusal(owner.billing.autoRecharge({
              payload: { enabled: true, threshold_micros: 2_000_000, amount_micros: 20_000_000 }
            }))
          ],
          ["body_too_large", refusal(owner.router.select({ headers: {}, payload: { prompt: "x".repeat(5 * 1024 * 1024) } }))],
          ["QueryStringRejection", refusal(extraQuery.usage.quota())],
          ["JsonDataRejection", refusal(extraField.keys.create({ payload: { name: "x", scopes: ["runs_read"] } }))],
          ["JsonSyntaxRejection", refusal(brokenJson.keys.create({ payload: { name: "x", scopes: ["runs_read"] } }))],
          [
            "UnsupportedMediaTypeRejection",
            refusal(textBody.keys.create({ payload: { name: "x", scopes: ["runs_read"] } }))
          ],
          ["PayloadTooLargeRejection", refusal(hugeBody.keys.create({ payload: { name: "x", scopes: ["runs_read"] } }))]
        ]
        for (const [expected, attempt] of cases) {
          const seen = yield* attempt
          assert.strictEqual(seen.tag, expected)
          if (/^[a-z_]+$/.test(expected)) assert.match(seen.requestId ?? "", /^req_[0-9a-f]{32}$/, expected)
        }
        const traceable = yield* refusal(run(traced, "conflicting", { ...decision, state: { ticket: "third" } }))
        assert.deepStrictEqual(traceable, { tag: "idempotency_conflict", requestId: "client-test.1" })
        const stored = (yield* call("GET", "/v1/usage", { secret })).json()
        assert.strictEqual(stored.runs.total, 1, "only the first run was stored")
      }))
  })

  describe("npm run client:example", () => {
    it.effect("runs the README's example from the package's source: a key, a run, a refused reuse, a selection", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        const address = yield* ServerAddress
        const output = yield* exec(["--conditions=@arbiter/source", "--import", "tsx", ExamplePath], {
          ARBITER_BASE_URL: address.url,
          ARBITER_API_KEY: secret
        })
        const steps = output.stdout.trim().split("\n").map((line) => JSON.parse(line))
        assert.deepStrictEqual(steps.map((step) => step.step), ["key", "run", "conflict", "selection"])
        assert.strictEqual(steps[1].state, "completed")
        assert.strictEqual(steps[2].code, "idempotency_conflict")
        const usage = (yield* call("GET", "/v1/usage", { secret })).json()
        assert.strictEqual(usage.runs.total, 2, "the decision and the selection; the refused reuse stored nothing")
      }))
  })
})

describe("npm run client:example", () => {
  it("runs the example from the package's source", () => {
    const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"))
    assert.strictEqual(manifest.scripts["client:example"], `node --conditions=@arbiter/source --import tsx ${ExamplePath}`)
  })
})
