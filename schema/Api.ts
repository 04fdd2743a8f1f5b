/**
 * The whole contract: every group of the service, the errors the boundary answers on any route, and the OpenAPI
 * document's info (version 0.1.0). A typed `HttpApiClient` needs nothing but this module.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { InternalError, wire } from "./Errors.js"
import { BillingApi } from "./BillingApi.js"
import { HealthApi } from "./HealthApi.js"
import { KeysApi } from "./KeysApi.js"
import { RouterApi } from "./RouterApi.js"
import { RunsApi } from "./RunsApi.js"
import { UsageApi } from "./UsageApi.js"
import { tidyOpenApi } from "./OpenApiDocument.js"

/** The Arbiter API. */
export class Api extends HttpApi.make("arbiter").add(HealthApi).add(RunsApi).add(RouterApi).add(KeysApi).add(UsageApi).add(BillingApi).addError(wire(InternalError)).annotateContext(
  OpenApi.annotations({
    title: "Arbiter",
    version: "0.1.0",
    description:
      "Decision runs, a model router, API keys, usage, quota and billing for teams building on language models.",
    transform: tidyOpenApi
  })
) {}
