/**
 * The committed OpenAPI document (`schema/openapi.json`, equal to the served one: test/health/Health.test.ts) is
 * complete for client authors: every operation has an example request (body and parameters) and an example of every
 * response, each valid against its schema; every error schema fixes its `code` to the one code it stands for, at
 * that code's status; `Idempotency-Key` is declared where the contract reads it (required on `POST /v1/runs`); and
 * the response headers are documented (`x-request-id` everywhere, `Server-Timing` and `Retry-After` on the two
 * routes that run the model).
 */
import { assert, describe, it } from "@effect/vitest"
import { ErrorClasses, statusOf } from "../../schema/Errors.js"
import { committedDocument as document, makeValidator, operationsOf, resolve } from "./OpenApiValidator.js"

const validate = makeValidator(document)
const operations = operationsOf(document)
const name = (path: string, method: string) => `${method.toUpperCase()} ${path}`
const statusOfCode = new Map(ErrorClasses.map((cls) => [cls._tag, statusOf(cls)]))
const PlainTextWords = [
  "Failed to parse the request body as JSON",
  "Failed to deserialize query string",
  "Failed to buffer the request body",
  "Expected request with `Content-Type: application/json`",
  "Failed to deserialize the JSON body into the target type"
]

describe("schema/openapi.json", () => {
  it("has 25 operations, each with an example of its body and of every parameter, valid against their schemas", () => {
    assert.strictEqual(operations.length, 25)
    for (const { method, operation, path } of operations) {
      const where = name(path, method)
      for (const [index, parameter] of (operation.parameters ?? []).entries()) {
        assert.isDefined(parameter.example, `${where}: parameter ${parameter.name} has no example`)
        assert.deepStrictEqual(
          validate(["paths", path, method, "parameters", index, "schema"], parameter.example),
          [],
          `${where}: example of ${parameter.name}`
        )
      }
      if (operation.requestBody !== undefined) {
        const examples = Object.values<any>(operation.requestBody.content["application/json"].examples ?? {})
        assert.isAbove(examples.length, 0, `${where}: no example request body`)
        for (const example of examples) {
          assert.deepStrictEqual(
            validate(["paths", path, method, "requestBody", "content", "application/json", "schema"], example.value),
            [],
            `${where}: example request body`
          )
        }
      }
    }
  })

  it("shows an example of every response, in every media type, valid against its schema", () => {
    for (const { method, operation, path } of operations) {
      for (const [status, response] of Object.entries<any>(operation.responses)) {
        for (const [type, media] of Object.entries<any>(response.content ?? {})) {
          const where = `${name(path, method)} ${status} ${type}`
          const examples = Object.entries<any>(media.examples ?? {})
          assert.isAbove(examples.length, 0, `${where}: no example`)
          for (const [key, example] of examples) {
            const location = ["paths", path, method, "responses", status, "content", type, "schema"]
            assert.deepStrictEqual(validate(location, example.value), [], `${where}: example ${key}`)
            if (type.startsWith("text/plain")) {
              const known = PlainTextWords.some((words) => example.value.startsWith(words))
              assert.isTrue(known, `${where}: ${example.value}`)
            }
          }
        }
      }
    }
  })

  it("fixes each error schema's code to its one code, listed under that code's status, with an example of each", () => {
    const components = Object.keys(document.components.schemas).filter((key) => key.startsWith("Error_"))
    assert.strictEqual(components.length, ErrorClasses.length, "one error schema per code")
    for (const component of components) {
      const code = component.slice("Error_".length)
      const schema = document.components.schemas[component]
      assert.deepStrictEqual(schema.properties.error.properties.code, { type: "string", enum: [code] }, component)
      assert.deepStrictEqual(schema.examples[0].error.code, code, component)
    }
    for (const { method, operation, path } of operations) {
      for (const [status, response] of Object.entries<any>(operation.responses)) {
        const json = response.content?.["application/json"]
        const members: Array<any> = json?.schema?.anyOf ?? (json === undefined ? [] : [json.schema])
        for (const member of members.filter((member) => member.$ref?.startsWith("#/components/schemas/Error_"))) {
          const code = member.$ref.slice("#/components/schemas/Error_".length)
          const where = `${name(path, method)} ${status} ${code}`
          assert.strictEqual(statusOfCode.get(code), Number(status), where)
          assert.strictEqual(json.examples?.[code]?.value?.error?.code, code, `${where}: example`)
          assert.include(response.description, code, `${where}: description`)
        }
      }
    }
  })

  it("declares Idempotency-Key: required on POST /v1/runs, optional on POST /v1/router/select, nowhere else", () => {
    const headerOf = (path: string, method: string) =>
      document.paths[path][method].parameters.find((parameter: any) => parameter.in === "header")
    const required = headerOf("/v1/runs", "post")
    assert.strictEqual(required.name, "idempotency-key")
    assert.isTrue(required.required)
    assert.strictEqual(required.schema.pattern, "^[\\x21-\\x7E]{1,255}$")
    assert.deepStrictEqual([required.schema.minLength, required.schema.maxLength], [1, 255])
    const optional = headerOf("/v1/router/select", "post")
    assert.strictEqual(optional.name, "idempotency-key")
    assert.isFalse(optional.required)
    const readers = operations.filter(({ operation }) =>
      (operation.parameters ?? []).some((parameter: any) => parameter.in === "header")
    ).map(({ method, path }) => name(path, method))
    assert.deepStrictEqual(readers, ["POST /v1/runs", "POST /v1/router/select"])
  })

  it("documents x-request-id on every response, Server-Timing and Retry-After on the two model routes", () => {
    const timed = ["POST /v1/runs", "POST /v1/router/select"]
    for (const { method, operation, path } of operations) {
      for (const [status, response] of Object.entries<any>(operation.responses)) {
        const where = `${name(path, method)} ${status}`
        const requestId = resolve(document, response.headers?.["x-request-id"] ?? {})
        assert.isTrue(requestId.required, `${where}: x-request-id`)
        assert.deepStrictEqual(validate(["components", "headers", "RequestId", "schema"], requestId.example), [])
        const isTimed = timed.includes(name(path, method))
        const serverTiming = response.headers["Server-Timing"]
        if (isTimed && status !== "401" && status !== "403") {
          assert.isDefined(serverTiming, `${where}: Server-Timing`)
          assert.strictEqual(serverTiming.required, Number(status) < 300, `${where}: Server-Timing required`)
        } else {
          assert.isUndefined(serverTiming, `${where}: no Server-Timing`)
        }
        const retryAfter = response.headers["Retry-After"]
        // 503: a request shed at capacity; 429: key_rate_limited (per-key limits).
        if (isTimed && (status === "503" || status === "429")) {
          assert.deepStrictEqual([retryAfter.required, retryAfter.schema.type], [false, "integer"], where)
        } else {
          assert.isUndefined(retryAfter, `${where}: no Retry-After`)
        }
      }
    }
  })
})
