/**
 * What the OpenAPI document says of one operation beyond its schemas, for client authors and the docs page's "Test
 * Request": an example request (its body and a value for each parameter), an example of each success response,
 * which parameters the contract requires although the service checks them itself, each parameter's description
 * beside its schema, and the timing headers of the two routes that run the model. An endpoint declares it next to its route with
 * `.annotate(OpenApi.Transform, operationDocs({...}))`; what every operation shares (`x-request-id` on every
 * response, an example of every error code) is added by the API's transform, OpenApiDocument.ts.
 */

/** The documentation of one operation. */
export interface OperationDocs {
  /** An example body (operations that take one). */
  readonly request?: unknown
  /** An example value of each path, query and header parameter, by name. */
  readonly parameters?: Readonly<Record<string, string>>
  /** Header parameters the contract requires, although the service answers their absence itself. */
  readonly requiredHeaders?: ReadonlyArray<string>
  /** An example body of each success status, with a one-line summary. */
  readonly responses: Readonly<Record<number, { readonly summary: string; readonly value: unknown }>>
  /** The operation answers with `Server-Timing`, and with `Retry-After` when it sheds a request at capacity. */
  readonly timed?: boolean
}

/** The name an example is listed under in the document. */
export const ExampleName = "example"

/** `Server-Timing` of the two routes that run the model (spec, Limits; decisions.md, Runs and Router). */
const serverTiming = (always: boolean) => ({
  description: always
    ? "admit, upstream, gateway (the service's own time) and total, in milliseconds; settle (part of gateway) once " +
      "the run has settled"
    : "as on a success, on the refusals of the run's own checks (from the Idempotency-Key on) and on a request " +
      "shed at capacity; absent on credential, body-shape and scope refusals",
  required: always,
  schema: { type: "string" },
  example: "admit;dur=57.997, upstream;dur=6.930, gateway;dur=97.126, total;dur=162.052, settle;dur=90.246"
})

/** `Retry-After` of a request shed at capacity (docs/decisions.md, Runs: "Overload"). */
const RetryAfter = {
  description: "sent only when the process is at capacity and answered 503 no_route_available before reading the " +
    "request (nothing stored or charged): whole seconds to wait before retrying with a new Idempotency-Key",
  required: false,
  schema: { type: "integer", minimum: 1 },
  example: 1
}

/** `Retry-After` of `429 key_rate_limited` (docs/decisions.md, "Per-key limits"). */
const KeyRetryAfter = {
  description: "sent with 429 key_rate_limited: whole seconds until the key's runs_per_minute bucket holds a run again",
  required: false,
  schema: { type: "integer", minimum: 1 },
  example: 12
}

const withExample = (media: Record<string, any>, summary: string, value: unknown) => ({
  ...media,
  examples: { [ExampleName]: { summary, value } }
})

/** The OpenAPI `transform` of an operation: adds the examples, required headers and timing headers it declares. */
export const operationDocs = (docs: OperationDocs) => (operation: Record<string, any>): Record<string, any> => {
  const examples = docs.parameters ?? {}
  const required = new Set(docs.requiredHeaders ?? [])
  const parameters = (operation.parameters ?? []).map((parameter: Record<string, any>) => ({
    ...parameter,
    ...(parameter.in === "header" && required.has(parameter.name) ? { required: true } : {}),
    ...(parameter.schema?.description === undefined ? {} : { description: parameter.schema.description }),
    ...(examples[parameter.name] === undefined ? {} : { example: examples[parameter.name] })
  }))
  const requestBody = operation.requestBody === undefined || docs.request === undefined
    ? operation.requestBody
    : {
      ...operation.requestBody,
      content: Object.fromEntries(
        Object.entries<Record<string, any>>(operation.requestBody.content).map(([type, media]) => [
          type,
          withExample(media, "an example request", docs.request)
        ])
      )
    }
  const responses: Record<string, any> = {}
  for (const [status, response] of Object.entries<Record<string, any>>(operation.responses ?? {})) {
    const example = docs.responses[Number(status)]
    const content = response.content === undefined || example === undefined
      ? response.content
      : Object.fromEntries(
        Object.entries<Record<string, any>>(response.content).map(([type, media]) => [
          type,
          withExample(media, example.summary, example.value)
        ])
      )
    const success = Number(status) < 300
    const headers = docs.timed === true && status !== "401" && status !== "403"
      ? {
        ...response.headers,
        "Server-Timing": serverTiming(success),
        ...(status === "503" ? { "Retry-After": RetryAfter } : {}),
        ...(status === "429" ? { "Retry-After": KeyRetryAfter } : {})
      }
      : response.headers
    responses[status] = {
      ...response,
      ...(content === undefined ? {} : { content }),
      ...(headers === undefined ? {} : { headers })
    }
  }
  return {
    ...operation,
    parameters,
    ...(requestBody === undefined ? {} : { requestBody }),
    responses
  }
}
