/**
 * Runs (spec, "Runs"; decisions.md, "Runs"). Body and query problems here are JSON `400 invalid_body`; the body
 * limit of `POST /v1/runs` is 4 MiB (`413 body_too_large`). `POST /v1/runs` needs the `Idempotency-Key` header
 * (1 to 255 bytes of visible ASCII), declared for the document and clients (IdempotencyKey.ts) and read by the
 * handler so its absence answers `idempotency_key_required`.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { BodyLimit, LargeBodyLimit } from "./Annotations.js"
import { Authentication } from "./Auth.js"
import { CallerRecord } from "./CallerRecord.js"
import { JsonRequestShape } from "./Boundary.js"
import { AnyJson, AnyValue, documentedAs } from "./Documented.js"
import {
  BudgetExhausted,
  DeadlineExceeded,
  DecisionUnavailable,
  IdempotencyConflict,
  IdempotencyKeyRequired,
  InputTooLarge,
  InvalidBody,
  InsufficientCredits,
  InvalidDecisionQuestions,
  InvalidIdempotencyKey,
  InvalidVerdictSchema,
  NoRouteAvailable,
  KeyQuotaExhausted,
  KeyRateLimited,
  OrganizationSpendQuotaExhausted,
  OrganizationTokenQuotaExhausted,
  ProviderBadResponse,
  ProviderRateLimited,
  ProviderUnavailable,
  RunNotFound,
  UnknownModel,
  VerdictSchemaViolationWire,
  wire
} from "./Errors.js"
import { IdempotencyKeyHeaderName, RequiredIdempotencyKey } from "./IdempotencyKey.js"
import { Timestamp } from "./Ids.js"
import { operationDocs } from "./OperationDocs.js"
import {
  CompletedRun,
  CreateRunRequest,
  ExampleRunId,
  ExampleRunListCursor,
  PendingRun,
  RunEventStream,
  RunListPage,
  StoredRun
} from "./RunsExamples.js"
import { JsonRouteErrors } from "./RouteErrors.js"
import { RequiredScope } from "./Scope.js"
import { StrictStruct, wholeNumberFromString } from "./Strict.js"

/** A conversation turn. */
export const Message = StrictStruct({
  role: Schema.Literals(["system", "user", "assistant"]),
  content: Schema.String
})

/** A question of a decision; its type and criteria are checked by the question-set rules. */
export const Question = StrictStruct({
  type: Schema.String.annotate({ description: "noul, choice or score" }),
  instructions: Schema.String,
  criteria: Schema.optionalKey(AnyValue({
    ...AnyJson,
    description: "noul: {true, false} descriptions; choice: {option: description | null}, 2 to 20; score: ordered " +
      "level names (array) or {level: description}, 2 to 20, lowest first"
  })),
  depends_on: Schema.optionalKey(Schema.Array(Schema.String)),
  ask_if: Schema.optionalKey(CallerRecord(Schema.Array(Schema.String))),
  alone: Schema.optionalKey(Schema.Boolean)
})

/**
 * What a `capability_hint` must match (decisions.md: 1 to 64 characters of `[a-z0-9_.:-]`). The body schema only
 * types it as a string and documents the pattern: the pattern is checked with the contract (check order step 5, in
 * `src/runs/RunSpec.ts`), so a bad hint does not hide the scope or the idempotency key checks.
 */
export const CapabilityHintPattern = /^[a-z0-9_.:-]{1,64}$/

/** `POST /v1/runs` body. */
export const RunRequest = StrictStruct({
  kind: Schema.Literals(["decision", "verdict"]),
  model: Schema.optionalKey(Schema.String),
  instructions: Schema.optionalKey(Schema.String),
  state: Schema.optionalKey(Schema.Union([Schema.String, CallerRecord(AnyValue())])),
  messages: Schema.optionalKey(Schema.Array(Message)),
  questions: Schema.optionalKey(CallerRecord(Question)),
  // Any JSON value passes here: a schema that is not a JSON Schema object is `invalid_verdict_schema` (step 5).
  schema: Schema.optionalKey(AnyValue({ type: "object", required: [], properties: {}, additionalProperties: AnyJson })),
  draws: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 8 }))),
  think_tokens: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 4096 }))),
  max_output_tokens: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 16_384 }))),
  deadline_ms: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 150_000 }))),
  capability_hint: Schema.optionalKey(
    Schema.String.check(documentedAs({ pattern: CapabilityHintPattern.source })).annotate({
      description: `a string matching the pattern ${CapabilityHintPattern.source}; checked after the scope and the ` +
        "Idempotency-Key (400 invalid_body)"
    })
  )
})

/** The decoded `POST /v1/runs` body. */
export type RunRequest = typeof RunRequest.Type

/** A run (decisions.md, Runs); optional fields are omitted when they have no value. */
export const Run = Schema.Struct({
  run_id: Schema.String.annotate({ description: "run_ + 32 hex" }),
  kind: Schema.Literals(["decision", "verdict"]),
  state: Schema.Literals(["pending", "completed", "failed"]),
  input_digest: Schema.String,
  output_digest: Schema.optionalKey(Schema.String),
  replayed: Schema.Boolean,
  decision: Schema.optionalKey(Schema.Struct({
    model: Schema.String,
    answers: CallerRecord(AnyValue()),
    skipped: Schema.optionalKey(CallerRecord(AnyValue()))
  })),
  usage: Schema.optionalKey(Schema.Struct({ input_tokens: Schema.Int, output_tokens: Schema.Int })),
  cost_micros: Schema.optionalKey(Schema.Int),
  created_at: Timestamp,
  settled_at: Schema.optionalKey(Timestamp),
  error: Schema.optionalKey(Schema.Struct({ code: Schema.String, message: Schema.String }))
}).annotate({ identifier: "Run" })

/** A run list row. */
export const RunRow = Schema.Struct({
  run_id: Schema.String,
  kind: Schema.Literals(["decision", "verdict"]),
  state: Schema.Literals(["pending", "completed", "failed"]),
  input_digest: Schema.String,
  output_digest: Schema.optionalKey(Schema.String),
  replayed: Schema.Literal(true)
})

/** `GET /v1/runs`: a page of runs, newest first. */
export const RunListPageSchema = Schema.Struct({
  runs: Schema.Array(RunRow),
  limit: Schema.Int,
  offset: Schema.Int.annotate({ description: "the offset served (0 on a page asked by cursor)" }),
  next_cursor: Schema.NullOr(Schema.String).annotate({
    description: "send as cursor for the next page; null on the last page"
  })
}).annotate({ identifier: "RunListPage" })

const RunIdPath = Schema.Struct({ run_id: Schema.String })

/** The body of `GET /v1/runs/{run_id}/stream`: the run as one server-sent event, then `end`. */
const RunEvents = Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/event-stream" })).annotate({
  description: "event `run` with the run as GET /v1/runs/{run_id} returns it, then event `end` with {}"
})

/** The runs group. */
export class RunsApi extends HttpApiGroup.make("runs")
  .add(
    HttpApiEndpoint.post("create", "/v1/runs", {
      payload: RunRequest,
      headers: RequiredIdempotencyKey,
      success: [
        Run.annotate({ identifier: undefined, description: "the run settled (replayed true on a replay)" }),
        Run.annotate({ identifier: undefined, description: "a replay of a run still pending" }).pipe(
          HttpApiSchema.status(202)
        )
      ],
      error: [
        ...JsonRouteErrors,
        wire(IdempotencyKeyRequired),
        wire(InvalidIdempotencyKey),
        wire(InvalidDecisionQuestions),
        wire(InvalidVerdictSchema),
        wire(UnknownModel),
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
        VerdictSchemaViolationWire,
        wire(DeadlineExceeded)
      ]
    })
      .annotate(BodyLimit, LargeBodyLimit)
      .annotate(RequiredScope, "runs_write")
      .annotate(OpenApi.Summary, "Create a run (header Idempotency-Key required); answers once it has settled")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          request: CreateRunRequest satisfies typeof RunRequest.Encoded,
          parameters: { [IdempotencyKeyHeaderName]: "ticket-4711-triage" },
          requiredHeaders: [IdempotencyKeyHeaderName],
          responses: {
            200: { summary: "a decision run, answered and settled", value: CompletedRun satisfies typeof Run.Encoded },
            202: { summary: "a replay of a run still pending", value: PendingRun satisfies typeof Run.Encoded }
          },
          timed: true
        })
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/runs", {
      query: StrictStruct({
        limit: Schema.optionalKey(wholeNumberFromString("a whole number of any length, clamped to 1-100; default 20")),
        offset: Schema.optionalKey(
          wholeNumberFromString(
            "a whole number >= 0 of any length; default 0; one above 9007199254740991 (2^53 - 1) is served and " +
              "echoed as that (an empty page); not with cursor"
          ).check(Schema.isGreaterThanOrEqualTo(0))
        ),
        cursor: Schema.optionalKey(Schema.String.annotate({
          description: "the next_cursor of the previous page (opaque): the page after it, unaffected by runs created " +
            "since; not with offset (400 invalid_body), and a cursor this organization's run list did not issue is " +
            "400 invalid_body"
        }))
      }),
      success: RunListPageSchema,
      error: [...JsonRouteErrors, wire(InvalidBody)]
    })
      .annotate(RequiredScope, "runs_read")
      .annotate(OpenApi.Summary, "The organization's runs, newest first (limit 1-100, default 20, clamped), by offset or cursor")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          parameters: { limit: "20", offset: "0", cursor: ExampleRunListCursor },
          responses: {
            200: {
              summary: "the newest run, and the cursor of the next page",
              value: RunListPage satisfies typeof RunListPageSchema.Encoded
            }
          }
        })
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/runs/:run_id", {
      params: RunIdPath,
      success: Run,
      error: [...JsonRouteErrors, wire(RunNotFound)]
    })
      .annotate(RequiredScope, "runs_read")
      .annotate(OpenApi.Summary, "One run, with its answers, usage and cost")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          parameters: { run_id: ExampleRunId },
          responses: { 200: { summary: "a settled decision run", value: StoredRun satisfies typeof Run.Encoded } }
        })
      )
  )
  .add(
    HttpApiEndpoint.get("stream", "/v1/runs/:run_id/stream", {
      params: RunIdPath,
      success: RunEvents,
      error: [...JsonRouteErrors, wire(RunNotFound)]
    })
      .annotate(RequiredScope, "runs_read")
      .annotate(OpenApi.Summary, "A one-time snapshot of the run as server-sent events")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          parameters: { run_id: ExampleRunId },
          responses: { 200: { summary: "the snapshot of a settled run", value: RunEventStream } }
        })
      )
  )
  .middleware(JsonRequestShape)
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "Decision runs: create one (an Idempotency-Key per logical run), list them, read one and stream its result."
  )
{}
