/**
 * Post-processing of the emitted OpenAPI document. A status's plain-text rejections are documented as one
 * `text/plain` string with an example of the rejection the status stands for, and 415/422 are dropped from
 * operations that take no body, where they cannot happen. It then documents what every operation shares:
 * `x-request-id` on every response, each error status's codes in its description with an example of each (every
 * error schema fixes its `code`, see Errors.ts). What is particular to an operation is its own (OperationDocs.ts).
 */
import { ExampleName } from "./OperationDocs.js"

const TextPlain = "text/plain; charset=utf-8"
const ErrorRefPrefix = "#/components/schemas/Error_"

/** The description of a status answered only by the plain-text 400s (malformed JSON, a query string refused). */
const PlainBadRequest = "The request did not match the expected schema"

/** The header every response carries (spec, "Request ids"). */
const RequestIdHeader = {
  description: "the request's id: the caller's own x-request-id when it matches ^[A-Za-z0-9._-]{1,128}$, otherwise " +
    "req_ + 32 hex; JSON errors repeat it as error.request_id",
  required: true,
  schema: { type: "string", pattern: "^[A-Za-z0-9._-]{1,128}$" },
  example: "req_5f0c6a1e9b2d4c7f8a3e0b6d2c9f1a47"
}

/** An example of the plain-text rejection of each status (docs/decisions.md, Boundary: "Rejection wording"). */
const textExample = (status: string, takesBody: boolean): { summary: string; value: string } | undefined => {
  switch (status) {
    case "400":
      return takesBody
        ? { summary: "malformed JSON", value: "Failed to parse the request body as JSON: Unexpected end of JSON input" }
        : { summary: "an unknown query parameter", value: "Failed to deserialize query string: unknown field \"foo\"" }
    case "413":
      return { summary: "a body over 1 MiB", value: "Failed to buffer the request body: length limit exceeded" }
    case "415":
      return { summary: "no JSON content type", value: "Expected request with `Content-Type: application/json`" }
    case "422":
      return {
        summary: "a body that does not match the schema",
        value: "Failed to deserialize the JSON body into the target type: unknown field \"foo\""
      }
  }
  return undefined
}

/** The error codes a status lists, from its members' component names. */
const codesOf = (members: ReadonlyArray<any>): Array<string> =>
  members.flatMap((member) =>
    typeof member?.$ref === "string" && member.$ref.startsWith(ErrorRefPrefix)
      ? [member.$ref.slice(ErrorRefPrefix.length)]
      : []
  )

/** A status answered only in plain text: one rejection keeps its schema, several are one string. */
const tidyTextOnly = (status: string, response: any, text: any, takesBody: boolean): any => {
  const plain = textExample(status, takesBody)
  if (plain === undefined) return response
  const several = Array.isArray(text.schema?.anyOf)
  const content = {
    ...response.content,
    [TextPlain]: { ...text, ...(several ? { schema: { type: "string" } } : {}), examples: { [ExampleName]: plain } }
  }
  return { ...response, ...(several && status === "400" ? { description: PlainBadRequest } : {}), content }
}

/** A status with JSON error codes, and perhaps a plain-text rejection beside them. */
const tidyCodes = (status: string, response: any, json: any, text: any, takesBody: boolean, schemas: any): any => {
  const members: Array<any> = Array.isArray(json.schema?.anyOf) ? json.schema.anyOf : [json.schema]
  const codes = codesOf(members)
  const content: Record<string, unknown> = {
    "application/json": {
      ...json,
      ...(codes.length === 0 ? {} : {
        examples: Object.fromEntries(codes.map((code) => [
          code,
          { summary: `${status} ${code}`, value: schemas[`Error_${code}`]?.examples?.[0] }
        ]))
      })
    }
  }
  const plain = text === undefined ? undefined : textExample(status, takesBody)
  if (text !== undefined) {
    content[TextPlain] = {
      schema: { type: "string" },
      ...(plain === undefined ? {} : { examples: { [ExampleName]: plain } })
    }
  }
  const description = codes.length === 0
    ? response.description
    : `${codes.join(", ")}${text === undefined ? "" : ", or a plain-text rejection"} (branch on error.code)`
  return { ...response, description, content }
}

const tidyResponse = (status: string, response: any, takesBody: boolean, schemas: Record<string, any>): any => {
  const json = response?.content?.["application/json"]
  const text = response?.content?.[TextPlain]
  if (json !== undefined) return tidyCodes(status, response, json, text, takesBody, schemas)
  if (text !== undefined) return tidyTextOnly(status, response, text, takesBody)
  return response
}

/** Tidies an emitted document (used as the API's OpenAPI `transform`). */
export const tidyOpenApi = (document: Record<string, any>): Record<string, any> => {
  const schemas = { ...document.components?.schemas }
  const paths: Record<string, any> = {}
  for (const [path, operations] of Object.entries<Record<string, any>>(document.paths ?? {})) {
    paths[path] = {}
    for (const [method, operation] of Object.entries<any>(operations)) {
      const takesBody = operation.requestBody !== undefined
      const responses: Record<string, any> = {}
      for (const [status, response] of Object.entries<any>(operation.responses ?? {})) {
        if (!takesBody && (status === "415" || status === "422")) continue
        const tidied = tidyResponse(status, response, takesBody, schemas)
        responses[status] = {
          ...tidied,
          headers: { "x-request-id": { $ref: "#/components/headers/RequestId" }, ...tidied.headers }
        }
      }
      paths[path][method] = { ...operation, responses }
    }
  }
  return {
    ...document,
    paths,
    components: { ...document.components, schemas, headers: { RequestId: RequestIdHeader } }
  }
}
