/**
 * The whole contract: every group of the service, how bodies and queries are decoded, and the OpenAPI document's
 * info (version 0.1.0) and servers. A typed `HttpApiClient` needs nothing but this module.
 */
import { HttpApi, OpenApi } from "effect/http-api"
import { BillingApi } from "./BillingApi.js"
import { HealthApi } from "./HealthApi.js"
import { KeysApi } from "./KeysApi.js"
import { RouterApi } from "./RouterApi.js"
import { RunsApi } from "./RunsApi.js"
import { UsageApi } from "./UsageApi.js"
import { tidyOpenApi } from "./OpenApiDocument.js"
import { StrictParseOptions } from "./Strict.js"

/**
 * Where the API is served. First the service that serves the document itself (a relative URL, which OpenAPI resolves
 * against the document's own address: `/docs` sends its "Test Request" there, wherever the service is deployed); then
 * the address `npm start` listens on, for tools reading the committed `schema/openapi.json`.
 */
const Servers = [
  { url: "/", description: "The service that serves this document (its /openapi.json and /docs)" },
  { url: "http://127.0.0.1:8080", description: "A service started locally with npm start (PORT 8080)" }
]

/**
 * The Arbiter API. Bodies and query strings decode under {@link StrictParseOptions} (an unknown key is refused at
 * every depth); every route answers `500 internal_error` (RouteErrors.ts).
 */
export class Api extends HttpApi.make("arbiter")
  .add(HealthApi, RunsApi, RouterApi, KeysApi, UsageApi, BillingApi)
  .annotate(HttpApi.PayloadParseOptions, StrictParseOptions)
  .annotate(HttpApi.QueryParseOptions, StrictParseOptions)
  .annotateMerge(
    OpenApi.annotations({
      title: "Arbiter",
      version: "0.1.0",
      description:
        "Decision runs, a model router, API keys, usage, quota and billing for teams building on language models.",
      servers: Servers,
      transform: tidyOpenApi
    })
  )
{}
