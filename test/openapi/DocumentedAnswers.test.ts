/**
 * The document is true of the live service: every operation's example request, taken from `schema/openapi.json`
 * (its body and the example of each parameter; ids of things this test made where an example names one), is
 * answered with a documented status, in a documented media type, with a body valid against the documented schema and
 * every header the document marks required. Refusals are checked the same way, so the error schemas (each fixing its
 * code) describe real answers too.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call, type CallOptions } from "../support/Api.js"
import type { RawResponse } from "../support/RawHttp.js"
import { seedKey, seedOrganization } from "../support/Seed.js"
import { TestServerLive } from "../support/TestServer.js"
import { committedDocument as document, makeValidator, resolve } from "./OpenApiValidator.js"

const validate = makeValidator(document)

/** The example request of an operation, with path parameters overridden where the test made the thing named. */
const exampleRequest = (method: string, path: string, ids: Record<string, string> = {}) => {
  const operation = document.paths[path][method]
  const parameters: Array<any> = operation.parameters ?? []
  const value = (parameter: any) => ids[parameter.name] ?? parameter.example
  const url = path.replace(/\{(\w+)\}/g, (_, param: string) =>
    encodeURIComponent(value(parameters.find((parameter) => parameter.in === "path" && parameter.name === param))))
  const query = new URLSearchParams(
    parameters.filter((parameter) => parameter.in === "query").map((parameter): [string, string] => [
      parameter.name,
      value(parameter)
    ])
  ).toString()
  const headers = Object.fromEntries(
    parameters.filter((parameter) => parameter.in === "header").map((parameter) => [parameter.name, value(parameter)])
  )
  const body = operation.requestBody?.content["application/json"].examples.example.value
  return { path: query === "" ? url : `${url}?${query}`, headers, body }
}

/** Problems of an answer against the document: undocumented status or media type, invalid body, missing header. */
const problemsOf = (method: string, path: string, response: RawResponse): ReadonlyArray<string> => {
  const documented = document.paths[path][method].responses[String(response.status)]
  if (documented === undefined) return [`status ${response.status} is not documented: ${response.text}`]
  const problems: Array<string> = []
  const type = String(response.headers["content-type"] ?? "").split(";")[0]!.trim()
  const media = Object.keys(documented.content ?? {}).find((key) => key.split(";")[0]!.trim() === type)
  if (media === undefined) problems.push(`media type ${type} is not documented for ${response.status}`)
  else {
    const body = type === "application/json" ? response.json() : response.text
    const location = ["paths", path, method, "responses", String(response.status), "content", media, "schema"]
    problems.push(...validate(location, body))
  }
  for (const [header, definition] of Object.entries<any>(documented.headers ?? {})) {
    if (resolve(document, definition).required === true && response.headers[header.toLowerCase()] === undefined) {
      problems.push(`required header ${header} missing`)
    }
  }
  return problems
}

/** Sends an operation's example request (`url`, `headers`, `body` replace its parts) and checks the answer. */
const documentedCall = (
  method: string,
  path: string,
  status: number,
  options: CallOptions & {
    readonly ids?: Record<string, string>
    readonly url?: string
    readonly without?: string
  }
) =>
  Effect.gen(function*() {
    const example = exampleRequest(method, path, options.ids)
    const body = options.body ?? example.body
    const headers: Record<string, string> = { ...example.headers, ...options.headers }
    if (options.without !== undefined) delete headers[options.without]
    const response = yield* call(method.toUpperCase(), options.url ?? example.path, {
      ...(options.secret === undefined ? {} : { secret: options.secret }),
      ...(body === undefined ? {} : { body }),
      headers
    })
    const where = `${method.toUpperCase()} ${options.url ?? path}`
    assert.strictEqual(response.status, status, `${where}: ${response.text}`)
    assert.deepStrictEqual(problemsOf(method, path, response), [], `${where} ${response.status}`)
    return response
  })

layer(TestServerLive(), { excludeTestServices: true, timeout: "120 seconds" })("the document and the service", (it) => {
  describe("every operation's example request", () => {
    it.effect("is answered as documented", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        yield* documentedCall("get", "/healthz", 200, {})
        yield* documentedCall("get", "/readyz", 200, {})

        const run = (yield* documentedCall("post", "/v1/runs", 200, { secret })).json()
        assert.strictEqual(run.state, "completed")
        // The examples show `cursor` and `offset` both, which together are a 400: the call sends one of them.
        yield* documentedCall("get", "/v1/runs", 200, { secret, url: "/v1/runs?limit=20&offset=0" })
        yield* documentedCall("get", "/v1/runs/{run_id}", 200, { secret, ids: { run_id: run.run_id } })
        const stream = yield* documentedCall("get", "/v1/runs/{run_id}/stream", 200, {
          secret,
          ids: { run_id: run.run_id }
        })
        assert.match(stream.text, /^event: run\ndata: /)

        const selection = (yield* documentedCall("post", "/v1/router/select", 200, { secret })).json()
        assert.strictEqual(selection.model.id, selection.ranking[0].id)
        yield* documentedCall("get", "/v1/router/task-types", 200, { secret })
        yield* documentedCall("get", "/v1/router/models", 200, { secret })

        yield* documentedCall("get", "/v1/keys", 200, { secret })
        const key = (yield* documentedCall("post", "/v1/keys", 201, { secret })).json()
        yield* documentedCall("get", "/v1/keys/{key_id}", 200, { secret, ids: { key_id: key.id } })
        yield* documentedCall("patch", "/v1/keys/{key_id}", 200, { secret, ids: { key_id: key.id } })
        yield* documentedCall("post", "/v1/keys/{key_id}/rotate", 200, { secret, ids: { key_id: key.id } })
        yield* documentedCall("delete", "/v1/keys/{key_id}", 200, { secret, ids: { key_id: key.id } })

        const usageRun = run.run_id.replace(/^run_(.{8})(.{4})(.{4})(.{4})(.{12})$/, "run_$1-$2-$3-$4-$5")
        yield* documentedCall("get", "/v1/usage", 200, { secret })
        yield* documentedCall("get", "/v1/usage/ledger", 200, { secret, url: "/v1/usage/ledger?limit=2" })
        yield* documentedCall("get", "/v1/usage/export", 200, { secret })
        yield* documentedCall("get", "/v1/usage/daily", 200, { secret })
        yield* documentedCall("get", "/v1/usage/runs/{run_id}", 200, { secret, ids: { run_id: usageRun } })
        yield* documentedCall("get", "/v1/quota", 200, { secret })

        yield* documentedCall("get", "/v1/billing", 200, { secret })
        yield* documentedCall("post", "/v1/billing/checkout", 200, { secret })
        yield* documentedCall("post", "/v1/billing/portal", 200, { secret })
        const recharge = yield* documentedCall("put", "/v1/billing/auto-recharge", 409, { secret })
        assert.strictEqual(recharge.json().error.code, "payment_method_required", "no card saved yet")
      }))
  })

  describe("refusals", () => {
    it.effect("are answered as documented, each with the code its schema fixes", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const { secret } = organization
        const reader = yield* seedKey(organization.organizationId, organization.ownerId, ["runs_read"])
        const codeOf = (response: RawResponse) => response.json().error.code
        const runs = "/v1/runs"
        assert.strictEqual(codeOf(yield* documentedCall("post", runs, 401, {})), "missing_credentials")
        assert.strictEqual(codeOf(yield* documentedCall("post", runs, 403, { secret: reader.secret })), "scope_denied")
        const noKey = yield* documentedCall("post", runs, 400, { secret, without: "idempotency-key" })
        assert.strictEqual(codeOf(noKey), "idempotency_key_required")
        const emptyKey = yield* documentedCall("post", runs, 400, { secret, headers: { "idempotency-key": "" } })
        assert.strictEqual(codeOf(emptyKey), "invalid_idempotency_key")
        const badModel = yield* documentedCall("post", runs, 400, {
          secret,
          body: { ...exampleRequest("post", runs).body, model: "gpt-nothing" }
        })
        assert.strictEqual(codeOf(badModel), "unknown_model")
        yield* documentedCall("post", runs, 200, { secret })
        const conflict = yield* documentedCall("post", runs, 409, {
          secret,
          body: { ...exampleRequest("post", runs).body, state: { ticket: "another" } }
        })
        assert.strictEqual(codeOf(conflict), "idempotency_conflict")
        const unknownRun = yield* documentedCall("get", "/v1/runs/{run_id}", 404, { secret })
        assert.strictEqual(codeOf(unknownRun), "run_not_found")
        const oneBound = yield* documentedCall("get", "/v1/usage", 400, {
          secret,
          url: "/v1/usage?start_at=2026-11-01T00:00:00Z"
        })
        assert.strictEqual(codeOf(oneBound), "invalid_parameter")
        const policy = yield* documentedCall("post", "/v1/router/select", 400, {
          secret,
          body: { prompt: "Summarize this report.", policy: "cheapest" }
        })
        assert.strictEqual(codeOf(policy), "invalid_policy")
        const extraField = yield* documentedCall("post", "/v1/keys", 422, {
          secret,
          body: { ...exampleRequest("post", "/v1/keys").body, colour: "blue" }
        })
        assert.match(extraField.text, /^Failed to deserialize the JSON body into the target type: /)
        const query = yield* documentedCall("get", "/v1/quota", 400, { secret, url: "/v1/quota?colour=blue" })
        assert.match(query.text, /^Failed to deserialize query string: /)
      }))
  })
})
