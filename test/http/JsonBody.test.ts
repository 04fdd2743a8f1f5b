/**
 * The boundary's JSON body rules as functions: which content types are JSON, parsing, and the nesting limit measured
 * without recursion; and the verdict schema check, which must also survive any nesting (it runs below the boundary).
 */
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { isJsonContentType, MaxJsonDepth, parseJsonBody, tooDeepUnder } from "../../src/http/JsonBody.js"
import { checkVerdictSchema } from "../../src/runs/VerdictSchema.js"

const arrays = (depth: number, leaf: unknown = 1): unknown => {
  let value = leaf
  for (let i = 0; i < depth; i++) value = [value]
  return value
}

const objects = (depth: number, key = "not"): Record<string, unknown> => {
  let value: Record<string, unknown> = {}
  for (let i = 1; i < depth; i++) value = { [key]: value }
  return value
}

describe("isJsonContentType", () => {
  it("accepts application/json and application/<subtype>+json, any case, with parameters", () => {
    for (
      const type of [
        "application/json",
        "Application/JSON; charset=utf-8",
        "application/problem+json",
        "application/vnd.foo.bar-v2+json",
        " application/merge-patch+json ;charset=UTF-8"
      ]
    ) assert.isTrue(isJsonContentType(type), type)
  })

  it("refuses everything else", () => {
    for (
      const type of [
        undefined,
        "",
        "text/json",
        "application/jsonx",
        "application/json-seq",
        "application/+json",
        "application/vnd foo+json",
        "image/svg+json",
        "application/json, text/plain",
        "multipart/form-data; boundary=application/json"
      ]
    ) assert.isFalse(isJsonContentType(type), String(type))
  })
})

describe("parseJsonBody", () => {
  it("parses, or says why not with serde's EOF wording for an empty body", () => {
    assert.deepStrictEqual(parseJsonBody("{\"a\":[1]}"), { _tag: "Parsed", value: { a: [1] } })
    assert.deepStrictEqual(parseJsonBody(" \n"), { _tag: "Malformed", detail: "EOF while parsing a value at line 1 column 0" })
    assert.strictEqual(parseJsonBody("{\"a\":")._tag, "Malformed")
  })

  it(`counts the outermost container as level 1 and allows ${MaxJsonDepth}`, () => {
    assert.strictEqual(parseJsonBody(JSON.stringify(arrays(MaxJsonDepth)))._tag, "Parsed")
    assert.deepStrictEqual(parseJsonBody(JSON.stringify(arrays(MaxJsonDepth + 1))), {
      _tag: "TooDeep",
      detail: `the body nests deeper than ${MaxJsonDepth} levels of arrays and objects`
    })
    const body = { ok: arrays(10), state: { s: arrays(MaxJsonDepth) } }
    assert.deepStrictEqual(parseJsonBody(JSON.stringify(body)), {
      _tag: "TooDeep",
      detail: `"state" nests deeper than ${MaxJsonDepth} levels of arrays and objects`
    })
  })

  it("measures a million levels without exhausting the stack, and a wide body fully", () => {
    const deep = `${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}`
    assert.strictEqual(parseJsonBody(deep)._tag, "TooDeep")
    assert.strictEqual(tooDeepUnder(objects(1_000_000, "k")), "k")
    const wide = Array.from({ length: 200_000 }, (_, i) => (i === 199_999 ? arrays(MaxJsonDepth) : [i]))
    assert.strictEqual(tooDeepUnder(wide), "")
    assert.strictEqual(tooDeepUnder(wide.slice(0, -1)), undefined)
    assert.strictEqual(tooDeepUnder("scalar"), undefined)
  })
})

describe("checkVerdictSchema at any depth or width", () => {
  it("refuses a schema past 32 levels as invalid_verdict_schema, however deep, without throwing", () => {
    for (const depth of [33, 5_000, 200_000]) {
      const result = checkVerdictSchema(objects(depth))
      assert.isTrue(Result.isFailure(result), `depth ${depth}`)
      if (Result.isFailure(result)) {
        assert.strictEqual(result.failure._tag, "invalid_verdict_schema")
        assert.include(result.failure.message, "nests more than 32 levels")
      }
    }
    assert.isTrue(Result.isSuccess(checkVerdictSchema(objects(32))))
  })

  it("measures a very wide schema without spreading it into arguments", () => {
    const result = checkVerdictSchema({ enum: Array.from({ length: 300_000 }, (_, i) => [i]) })
    assert.isTrue(Result.isSuccess(result))
  })
})
