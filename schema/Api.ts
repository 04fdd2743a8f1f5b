/**
 * The whole contract: every group of the service, how bodies and queries are decoded, and the OpenAPI document's
 * info (version 0.1.0). A typed `HttpApiClient` needs nothing but this module.
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
      transform: tidyOpenApi
    })
  )
{}
