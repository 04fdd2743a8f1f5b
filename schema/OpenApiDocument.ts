/**
 * Post-processing of the emitted OpenAPI document. OpenAPI keys responses by status, so a plain-text rejection that
 * shares a status with a JSON error comes out as a `string` member inside `application/json`; this moves such
 * members to `text/plain`, drops HttpApi's built-in decode error (the boundary answers `invalid_body` or a plain-text
 * rejection instead), and drops 415/422 from operations that take no body, where they cannot happen.
 */

const TextPlain = "text/plain; charset=utf-8"
const DecodeErrorRef = "#/components/schemas/HttpApiDecodeError"

const isText = (schema: any): boolean => schema?.type === "string" && schema.$ref === undefined

const tidyResponse = (response: any): any | undefined => {
  const json = response?.content?.["application/json"]
  if (json === undefined) return response
  const members: Array<any> = Array.isArray(json.schema?.anyOf) ? json.schema.anyOf : [json.schema]
  const kept = members.filter((member) => member?.$ref !== DecodeErrorRef)
  const text = kept.filter(isText)
  const structured = kept.filter((member) => !isText(member))
  const content: Record<string, unknown> = { ...response.content }
  delete content["application/json"]
  if (structured.length > 0) {
    content["application/json"] = { schema: structured.length === 1 ? structured[0] : { anyOf: structured } }
  }
  if (text.length > 0) content[TextPlain] = { schema: { type: "string" } }
  if (Object.keys(content).length === 0) return undefined
  return { ...response, content }
}

/** Tidies an emitted document (used as the API's OpenAPI `transform`). */
export const tidyOpenApi = (document: Record<string, any>): Record<string, any> => {
  const paths: Record<string, any> = {}
  for (const [path, operations] of Object.entries<Record<string, any>>(document.paths ?? {})) {
    paths[path] = {}
    for (const [method, operation] of Object.entries<any>(operations)) {
      const responses: Record<string, any> = {}
      for (const [status, response] of Object.entries<any>(operation.responses ?? {})) {
        if (operation.requestBody === undefined && (status === "415" || status === "422")) continue
        const tidied = tidyResponse(response)
        if (tidied !== undefined) responses[status] = tidied
      }
      paths[path][method] = { ...operation, responses }
    }
  }
  const schemas = { ...document.components?.schemas }
  delete schemas.HttpApiDecodeError
  delete schemas.Issue
  delete schemas.PropertyKey
  return { ...document, paths, components: { ...document.components, schemas } }
}
