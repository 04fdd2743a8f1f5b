/**
 * The Model Router (spec, "Model Router", "Router select request"; decisions.md, Router). Body and query problems
 * here are JSON `400 invalid_body`; the body limit of `POST /v1/router/select` is 4 MiB (`413 body_too_large`). Its
 * `Idempotency-Key` header is optional (IdempotencyKey.ts); when sent, the service checks it (1 to 255 bytes of
 * visible ASCII). The
 * schema refuses unknown keys at every depth, wrong types and out-of-range numbers; the rules that need the catalog
 * or the taxonomy (policy, task type, domain, model ids, weights only with `balanced`) are checked by the service.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BodyLimit, LargeBodyLimit } from "./Annotations.js"
import { Authentication } from "./Auth.js"
import { JsonRequestShape } from "./Boundary.js"
import {
  BudgetExhausted,
  DeadlineExceeded,
  DecisionUnavailable,
  IdempotencyConflict,
  InputTooLarge,
  InsufficientCredits,
  InvalidIdempotencyKey,
  InvalidPolicy,
  NoEligibleModel,
  NoRouteAvailable,
  KeyQuotaExhausted,
  KeyRateLimited,
  OrganizationSpendQuotaExhausted,
  OrganizationTokenQuotaExhausted,
  ProviderBadResponse,
  ProviderRateLimited,
  ProviderUnavailable,
  UnknownModelId,
  WeightsRequireBalanced,
  wire
} from "./Errors.js"
import { IdempotencyKeyHeaderName, OptionalIdempotencyKey } from "./IdempotencyKey.js"
import { operationDocs } from "./OperationDocs.js"
import {
  ModelCatalogExample,
  SelectRequestExample,
  SelectResponseExample,
  TaskTypeListingExample
} from "./RouterExamples.js"
import { ModelCatalog, SelectResponse, TaskTypeListing } from "./RouterResponses.js"
import { JsonRouteErrors } from "./RouteErrors.js"
import { RequiredScope } from "./Scope.js"
import { OptionalNullable, StrictStruct } from "./Strict.js"

/** A turn of `messages`: only `user` and `assistant` roles. */
export const SelectMessage = StrictStruct({
  role: Schema.Literals(["user", "assistant"]),
  content: Schema.String
})

/** `weights` of `balanced`: non-negative numbers, rescaled to sum to 1; a missing one counts 0. */
export const SelectWeights = StrictStruct({
  quality: Schema.optionalKey(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))),
  cost: Schema.optionalKey(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))),
  speed: Schema.optionalKey(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0)))
})

/** The catalog filters (`models`); an empty object keeps every model. */
export const SelectFilters = StrictStruct({
  include: Schema.optionalKey(Schema.Array(Schema.String)),
  exclude: Schema.optionalKey(Schema.Array(Schema.String)),
  providers: Schema.optionalKey(Schema.Array(Schema.String)),
  open_weights: OptionalNullable(Schema.Boolean),
  max_price_per_mtok: OptionalNullable(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))),
  min_context_tokens: OptionalNullable(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  modalities: Schema.optionalKey(Schema.Array(Schema.Literals(["text", "image", "audio", "video"])))
})

/** `POST /v1/router/select` body; `null` means absent for every nullable field. */
export const SelectRequest = StrictStruct({
  prompt: OptionalNullable(Schema.String),
  messages: OptionalNullable(Schema.Array(SelectMessage)),
  policy: OptionalNullable(Schema.String.annotate({
    description: "balanced (default), cost_efficient, capability_heavy or domain_skills"
  })),
  domain: OptionalNullable(Schema.String.annotate({ description: "a family of GET /v1/router/task-types" })),
  task_type: OptionalNullable(Schema.String.annotate({ description: "a task type of GET /v1/router/task-types" })),
  latency: OptionalNullable(Schema.Literals(["interactive", "standard", "batch"])),
  max_latency_ms: OptionalNullable(Schema.Finite.check(Schema.isGreaterThan(0))),
  weights: OptionalNullable(SelectWeights),
  models: OptionalNullable(SelectFilters)
})

/** The decoded `POST /v1/router/select` body. */
export type SelectRequest = typeof SelectRequest.Type

/** The router group. */
export class RouterApi extends HttpApiGroup.make("router")
  .add(
    HttpApiEndpoint.post("select", "/v1/router/select", {
      payload: SelectRequest,
      headers: OptionalIdempotencyKey,
      success: SelectResponse,
      error: [
        ...JsonRouteErrors,
        wire(InvalidIdempotencyKey),
        wire(InvalidPolicy),
        wire(WeightsRequireBalanced),
        wire(UnknownModelId),
        wire(NoEligibleModel),
        wire(InputTooLarge),
        wire(OrganizationSpendQuotaExhausted),
        wire(KeyQuotaExhausted),
        wire(KeyRateLimited),
        wire(OrganizationTokenQuotaExhausted),
        wire(IdempotencyConflict),
        wire(InsufficientCredits),
        wire(NoRouteAvailable),
        wire(DecisionUnavailable),
        wire(ProviderRateLimited),
        wire(ProviderUnavailable),
        wire(ProviderBadResponse),
        wire(BudgetExhausted),
        wire(DeadlineExceeded)
      ]
    })
      .annotate(BodyLimit, LargeBodyLimit)
      .annotate(RequiredScope, "runs_write")
      .annotate(
        OpenApi.Summary,
        "Classify a task and rank the catalog for it under a policy (optional header Idempotency-Key); billed as " +
          "one decision run"
      )
      .annotate(
        OpenApi.Transform,
        operationDocs({
          request: SelectRequestExample satisfies typeof SelectRequest.Encoded,
          parameters: { [IdempotencyKeyHeaderName]: "select-4711" },
          responses: {
            200: {
              summary: "a debugging task ranked for cost (ranking cut to two)",
              value: SelectResponseExample satisfies typeof SelectResponse.Encoded
            }
          },
          timed: true
        })
      )
  )
  .add(
    HttpApiEndpoint.get("taskTypes", "/v1/router/task-types", { success: TaskTypeListing, error: JsonRouteErrors })
      .annotate(RequiredScope, "runs_read")
      .annotate(OpenApi.Summary, "The task taxonomy with each type's benchmark weights")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          responses: {
            200: {
              summary: "the taxonomy (its first task type shown)",
              value: TaskTypeListingExample satisfies typeof TaskTypeListing.Encoded
            }
          }
        })
      )
  )
  .add(
    HttpApiEndpoint.get("models", "/v1/router/models", { success: ModelCatalog, error: JsonRouteErrors })
      .annotate(RequiredScope, "runs_read")
      .annotate(OpenApi.Summary, "The model catalog the router ranks, with its snapshot dates")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          responses: {
            200: {
              summary: "the catalog (its first model shown)",
              value: ModelCatalogExample satisfies typeof ModelCatalog.Encoded
            }
          }
        })
      )
  )
  .middleware(JsonRequestShape)
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "The model router: select a model for a task under a policy, and read the catalog and the task taxonomy it ranks."
  )
{}
