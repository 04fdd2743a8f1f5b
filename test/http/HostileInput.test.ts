/**
 * What an attacker sent, answered by the contract and storing nothing: question ids that are JavaScript prototype
 * names and `__proto__` members are ordinary keys; text PostgreSQL cannot store (a lone surrogate, a NUL) is refused
 * at the boundary as the route's body or query error before anything is stored or a model is called; a state that
 * would render to a huge prompt is `413 input_too_large` without rendering it; a verdict schema that is not an
 * object is `400 invalid_verdict_schema`; a statement PostgreSQL refuses for its data is never "database unavailable".
 */
import * as SqlClient from "effect/sql/SqlClient"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { isDataError } from "../../src/db/Unavailable.js"
import { toSqlError } from "../../src/db/SqlErrors.js"
import { unstorableIn, unstorableInJson } from "../../src/db/StorableText.js"
import { call, codeOf } from "../support/Api.js"
import { freshKey, oneQuestion, postRun } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerLive } from "../support/TestServer.js"

const PrototypeNames = ["constructor", "toString", "valueOf", "hasOwnProperty", "__defineGetter__", "__proto__"]

const runsOf = (organizationId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM runs WHERE organization_id = ${organizationId}`, ([row]) => row!.n))

/** A body as text, so `__proto__` and escapes reach the server exactly as written. */
const questionsBody = (questions: string, state = `"a customer asks for a refund"`) =>
  `{"kind":"decision","state":${state},"questions":{${questions}}}`

const noul = (instructions: string) => `{"type":"noul","instructions":"${instructions}"}`

describe("StorableText and data errors", () => {
  it("finds a NUL or a lone surrogate in values and keys, and nothing in well-formed text", () => {
    assert.isUndefined(unstorableIn({ a: ["ok", { "é😀": "fine \ud83d\ude00" }], n: 1, b: null }))
    assert.include(unstorableIn({ a: [{ b: "x\u0000y" }] })!, "a[0].b contains a NUL")
    assert.include(unstorableIn(JSON.parse('{"criteria":{"\\ud800":null}}'))!, "a field name under criteria contains a lone")
    assert.include(unstorableIn(JSON.parse('["\\udc00"]'))!, "[0] contains a lone UTF-16 surrogate")
  })

  it("reads a JSON text's parsed value as the walk does, whatever its escapes, skipping the walk only for plain text", () => {
    // Strings of escapes and characters near the unstorable ones: NUL, each surrogate half alone, in a pair, reversed,
    // after an escaped backslash, in either case.
    const piece = fc.constantFrom(
      "a", "\\u0000", "\\u0001", "\\ud800", "\\uDBFF", "\\udc00", "\\uDFFF", "\\ud83d\\ude00", "\\ude00\\ud83d",
      "\\\\u0000", "\\\\ud800", "\\uE000", "\\u00e9", "😀", "\\n", "\\\\"
    )
    const jsonString = fc.array(piece, { maxLength: 6 }).map((pieces) => `"${pieces.join("")}"`)
    const document = fc.tuple(jsonString, jsonString, jsonString).map(([key, value, item]) => `{${key}:{"k":[${value},${item}]}}`)
    fc.assert(fc.property(document, (text) => {
      const value = JSON.parse(text)
      assert.strictEqual(unstorableInJson(text, value), unstorableIn(value), text)
    }), { numRuns: 2_000, seed: 20261129 })
  })

  it("a refused statement is a data error; a lost connection or a timeout is not", () => {
    const failure = (cause: unknown) => toSqlError(cause, "failed")
    assert.isTrue(isDataError(failure({ code: "22P05" })), "untranslatable character")
    assert.isTrue(isDataError(failure({ code: "23505" })), "unique violation")
    assert.isTrue(isDataError(failure({ code: "22021" })), "invalid byte sequence")
    assert.isFalse(isDataError(failure({ code: "08006" })), "connection failure")
    assert.isFalse(isDataError(failure({ code: "57P01" })), "admin shutdown")
    assert.isFalse(isDataError(failure({ code: "ECONNREFUSED" })), "no server")
    assert.isFalse(isDataError(failure(new Error("Connection terminated unexpectedly"))))
  })
})

layer(TestServerLive(), { excludeTestServices: true, timeout: "120 seconds" })("hostile input", (it) => {
  describe("POST /v1/runs", () => {
    it.effect("200: question ids that are prototype names are answered like any id", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        const questions = PrototypeNames.map((id) => `"${id}":${noul(`Is ${id} a refund request?`)}`).join(",")
        const response = yield* postRun(secret, undefined, freshKey(), { rawBody: questionsBody(questions) })
        assert.strictEqual(response.status, 200, response.text)
        const answers = response.json().decision.answers
        assert.sameMembers(Object.keys(answers), PrototypeNames)
        for (const id of PrototypeNames) assert.strictEqual(answers[id].type, "noul", id)
        const stored = yield* call("GET", `/v1/runs/${response.json().run_id}`, { secret })
        assert.sameMembers(Object.keys(stored.json().decision.answers), PrototypeNames)
      }))

    it.effect("409: a body differing only in a __proto__ member is another body, not a replay", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        const key = freshKey()
        const first = yield* postRun(secret, undefined, key, { rawBody: questionsBody(`"refund":${noul("Refund?")}`) })
        assert.strictEqual(first.status, 200)
        const withProto = questionsBody(`"refund":${noul("Refund?")},"__proto__":${noul("Anything else?")}`)
        const second = yield* postRun(secret, undefined, key, { rawBody: withProto })
        assert.strictEqual(second.status, 409, second.text)
        assert.strictEqual(codeOf(second), "idempotency_conflict")
        const state = yield* postRun(secret, undefined, key, {
          rawBody: questionsBody(`"refund":${noul("Refund?")}`, `{"ticket":"x","__proto__":{"polluted":true}}`)
        })
        assert.strictEqual(state.status, 409, "a __proto__ member of the state counts too")
      }))

    it.effect("400 invalid_body for a lone surrogate or a NUL anywhere in the body; nothing stored; the key reusable", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* seedOrganization()
        const key = freshKey()
        const bodies = [
          questionsBody(`"topic":{"type":"choice","instructions":"Topic?","criteria":{"\\ud800":null,"b":null}}`),
          questionsBody(`"refund":${noul("Refund\\u0000?")}`),
          questionsBody(`"refund":${noul("Refund?")}`, `{"ticket":"\\udc00 lone low surrogate"}`),
          questionsBody(`"refund":${noul("Refund?")}`, `{"t\\u0000":"a NUL in a state key"}`)
        ]
        for (const body of bodies) {
          const response = yield* postRun(secret, undefined, key, { rawBody: body })
          assert.strictEqual(response.status, 400, body)
          assert.strictEqual(codeOf(response), "invalid_body", body)
          assert.include(response.json().error.message, "cannot be stored")
        }
        assert.strictEqual(yield* runsOf(organizationId), 0)
        assert.strictEqual((yield* postRun(secret, oneQuestion(), key)).status, 200, "the key is still free")
      }))

    it.effect("413 input_too_large for a state that would render past the limit, without rendering it; nothing stored", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* seedOrganization()
        let nested = JSON.stringify(Array.from({ length: 40_000 }, () => "x"))
        for (let level = 0; level < 250; level++) nested = `[${nested}]`
        const body = questionsBody(`"refund":${noul("Refund?")}`, `{"ticket":${nested}}`)
        assert.isBelow(body.length, 400_000)
        const response = yield* postRun(secret, undefined, freshKey(), { rawBody: body })
        assert.strictEqual(response.status, 413)
        assert.strictEqual(codeOf(response), "input_too_large")
        assert.strictEqual(yield* runsOf(organizationId), 0)
      }))

    it.effect("400 invalid_verdict_schema for a verdict schema that is not an object", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* seedOrganization()
        for (const schema of ["a string", 42, ["array"], null, true]) {
          const response = yield* postRun(secret, { kind: "verdict", state: "x", schema })
          assert.strictEqual(response.status, 400, JSON.stringify(schema))
          assert.strictEqual(codeOf(response), "invalid_verdict_schema", JSON.stringify(schema))
        }
        assert.strictEqual(yield* runsOf(organizationId), 0)
      }))
  })

  describe("text PostgreSQL cannot store, elsewhere", () => {
    it.effect("POST /v1/keys > 422 for a NUL in the name; GET /v1/usage > 400 for one in the query; nothing stored", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* seedOrganization()
        const sql = yield* SqlClient.SqlClient
        const [before] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM api_keys WHERE organization_id = ${organizationId}`
        const key = yield* call("POST", "/v1/keys", { secret, rawBody: `{"name":"bad\\u0000name","scopes":["runs_read"]}` })
        assert.strictEqual(key.status, 422)
        assert.isTrue(key.text.startsWith("Failed to deserialize the JSON body into the target type: "), key.text)
        const surrogate = yield* call("POST", "/v1/keys", { secret, rawBody: `{"name":"\\ud83d","scopes":["runs_read"]}` })
        assert.strictEqual(surrogate.status, 422)
        const [after] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM api_keys WHERE organization_id = ${organizationId}`
        assert.strictEqual(after!.n, before!.n)
        const usage = yield* call("GET", "/v1/usage/ledger?limit=%00", { secret })
        assert.strictEqual(usage.status, 400)
        assert.isTrue(usage.text.startsWith("Failed to deserialize query string: "), usage.text)
        const list = yield* call("GET", "/v1/runs?limit=1%00", { secret })
        assert.strictEqual(list.status, 400)
        assert.strictEqual(codeOf(list), "invalid_body")
        const checkout = yield* call("GET", "/billing/local/checkout/%00")
        assert.strictEqual(checkout.status, 404)
      }))
  })
})
