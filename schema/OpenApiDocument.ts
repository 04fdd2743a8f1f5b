/**
 * Post-processing of the emitted OpenAPI document. OpenAPI keys responses by status, so a plain-text rejection that
 * shares a status with a JSON error comes out as a `string` member inside `application/json`; this moves such
 * members to `text/plain`, drops HttpApi's built-in decode error (the boundary answers `invalid_body` or a plain-text
 * rejection instead), and drops 415/422 from operations that take no body, where they cannot happen. It then
 * documents what every operation shares: `x-request-id` on every response, each error status's codes in its
 * description with an example of each (every error schema fixes its `code`, see Errors.ts), and an example of the
 * plain-text rejection a status stands for. What is particular to an operation is its own (OperationDocs.ts).
 */
import { ExampleName } from "./OperationDocs.js"

const TextPlain = "text/plain; charset=utf-8"
const DecodeErrorRef = "#/components/schemas/HttpApiDecodeError"
const ErrorRefPrefix = "#/components/schemas/Error_"

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

const isText = (schema: any): boolean => schema?.type === "string" && schema.$ref === undefined

/** The error codes a status lists, from its members' component names. */
const codesOf = (members: ReadonlyArray<any>): Array<string> =>
  members.flatMap((member) =>
    typeof member?.$ref === "string" && member.$ref.startsWith(ErrorRefPrefix)
      ? [member.$ref.slice(ErrorRefPrefix.length)]
      : []
  )

const tidyResponse = (
  status: string,
  response: any,
  takesBody: boolean,
  schemas: Record<string, any>
): any | undefined => {
  const json = response?.content?.["application/json"]
  if (json === undefined) {
    const text = response?.content?.[TextPlain]
    const plain = textExample(status, takesBody)
    if (text === undefined || text.examples !== undefined || plain === undefined) return response
    const content = { ...response.content, [TextPlain]: { ...text, examples: { [ExampleName]: plain } } }
    return { ...response, content }
  }
  const members: Array<any> = Array.isArray(json.schema?.anyOf) ? json.schema.anyOf : [json.schema]
  const kept = members.filter((member) => member?.$ref !== DecodeErrorRef)
  const text = kept.filter(isText)
  const structured = kept.filter((member) => !isText(member))
  const codes = codesOf(structured)
  const content: Record<string, unknown> = { ...response.content }
  delete content["application/json"]
  if (structured.length > 0) {
    const { schema: _schema, ...rest } = json
    content["application/json"] = {
      ...rest,
      schema: structured.length === 1 ? structured[0] : { anyOf: structured },
      ...(codes.length === 0 ? {} : {
        examples: Object.fromEntries(codes.map((code) => [
          code,
          { summary: `${status} ${code}`, value: schemas[`Error_${code}`]?.examples?.[0] }
        ]))
      })
    }
  }
  const plain = text.length > 0 ? textExample(status, takesBody) : undefined
  if (text.length > 0) {
    content[TextPlain] = {
      schema: { type: "string" },
      ...(plain === undefined ? {} : { examples: { [ExampleName]: plain } })
    }
  }
  if (Object.keys(content).length === 0) return undefined
  const description = codes.length === 0
    ? response.description
    : `${codes.join(", ")}${text.length > 0 ? ", or a plain-text rejection" : ""} (branch on error.code)`
  return { ...response, description, content }
}

/** Tidies an emitted document (used as the API's OpenAPI `transform`). */
export const tidyOpenApi = (document: Record<string, any>): Record<string, any> => {
  const schemas = { ...document.components?.schemas }
  delete schemas.HttpApiDecodeError
  delete schemas.Issue
  delete schemas.PropertyKey
  const paths: Record<string, any> = {}
  for (const [path, operations] of Object.entries<Record<string, any>>(document.paths ?? {})) {
    paths[path] = {}
    for (const [method, operation] of Object.entries<any>(operations)) {
      const takesBody = operation.requestBody !== undefined
      const responses: Record<string, any> = {}
      for (const [status, response] of Object.entries<any>(operation.responses ?? {})) {
        if (!takesBody && (status === "415" || status === "422")) continue
        const tidied = tidyResponse(status, response, takesBody, schemas)
        if (tidied === undefined) continue
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
