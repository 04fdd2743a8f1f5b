/**
 * Runs (spec, "Runs"; decisions.md, "Runs"). Body and query problems here are JSON `400 invalid_body`; the body
 * limit of `POST /v1/runs` is 4 MiB (`413 body_too_large`). `POST /v1/runs` needs the `Idempotency-Key` header
 * (1 to 255 bytes of visible ASCII), declared for the document and clients (IdempotencyKey.ts) and read by the
 * handler so its absence answers `idempotency_key_required`.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema, SchemaAST } from "effect"
import { BodyLimit, LargeBodyLimit } from "./Annotations.js"
import { Authentication } from "./Auth.js"
import { CallerRecord } from "./CallerRecord.js"
import { JsonRequestShape } from "./Boundary.js"
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
  ScopeDenied,
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
import { RequiredScope } from "./Scope.js"
import { StrictStruct, wholeNumberFromString } from "./Strict.js"

/** A conversation turn. */
export const Message = StrictStruct({
  role: Schema.Literal("system", "user", "assistant"),
  content: Schema.String
})

/** A question of a decision; its type and criteria are checked by the question-set rules. */
export const Question = StrictStruct({
  type: Schema.String.annotations({ description: "noul, choice or score" }),
  instructions: Schema.String,
  criteria: Schema.optional(Schema.Unknown.annotations({
    description: "noul: {true, false} descriptions; choice: {option: description | null}, 2 to 20; score: ordered " +
      "level names (array) or {level: description}, 2 to 20, lowest first"
  })),
  depends_on: Schema.optional(Schema.Array(Schema.String)),
  ask_if: Schema.optional(CallerRecord(Schema.Array(Schema.String))),
  alone: Schema.optional(Schema.Boolean)
})

/**
 * What a `capability_hint` must match (decisions.md: 1 to 64 characters of `[a-z0-9_.:-]`). The body schema only
 * types it as a string and documents the pattern: the pattern is checked with the contract (check order step 5, in
 * `src/runs/RunSpec.ts`), so a bad hint does not hide the scope or the idempotency key checks.
 */
export const CapabilityHintPattern = /^[a-z0-9_.:-]{1,64}$/

/** `POST /v1/runs` body. */
export const RunRequest = StrictStruct({
  kind: Schema.Literal("decision", "verdict"),
  model: Schema.optional(Schema.String),
  instructions: Schema.optional(Schema.String),
  state: Schema.optional(Schema.Union(Schema.String, CallerRecord(Schema.Unknown))),
  messages: Schema.optional(Schema.Array(Message)),
  questions: Schema.optional(CallerRecord(Question)),
  // Any JSON value passes here: a schema that is not a JSON Schema object is `invalid_verdict_schema` (step 5).
  schema: Schema.optional(Schema.Unknown.annotations({
    [SchemaAST.SurrogateAnnotationId]: Schema.Record({ key: Schema.String, value: Schema.Unknown }).ast
  })),
  draws: Schema.optional(Schema.Int.pipe(Schema.between(1, 8))),
  think_tokens: Schema.optional(Schema.Int.pipe(Schema.between(0, 4096))),
  max_output_tokens: Schema.optional(Schema.Int.pipe(Schema.between(1, 16_384))),
  deadline_ms: Schema.optional(Schema.Int.pipe(Schema.between(1, 150_000))),
  capability_hint: Schema.optional(Schema.String.annotations({
    description: `a string matching the pattern ${CapabilityHintPattern.source}; checked after the scope and the ` +
      "Idempotency-Key (400 invalid_body)",
    jsonSchema: { pattern: CapabilityHintPattern.source }
  }))
})

/** The decoded `POST /v1/runs` body. */
export type RunRequest = typeof RunRequest.Type

/** A run (decisions.md, Runs); optional fields are omitted when they have no value. */
export const Run = Schema.Struct({
  run_id: Schema.String.annotations({ description: "run_ + 32 hex" }),
  kind: Schema.Literal("decision", "verdict"),
  state: Schema.Literal("pending", "completed", "failed"),
  input_digest: Schema.String,
  output_digest: Schema.optional(Schema.String),
  replayed: Schema.Boolean,
  decision: Schema.optional(Schema.Struct({
    model: Schema.String,
    answers: CallerRecord(Schema.Unknown),
    skipped: Schema.optional(CallerRecord(Schema.Unknown))
  })),
  usage: Schema.optional(Schema.Struct({ input_tokens: Schema.Int, output_tokens: Schema.Int })),
  cost_micros: Schema.optional(Schema.Int),
  created_at: Timestamp,
  settled_at: Schema.optional(Timestamp),
  error: Schema.optional(Schema.Struct({ code: Schema.String, message: Schema.String }))
}).annotations({ identifier: "Run" })

/** A run list row. */
export const RunRow = Schema.Struct({
  run_id: Schema.String,
  kind: Schema.Literal("decision", "verdict"),
  state: Schema.Literal("pending", "completed", "failed"),
  input_digest: Schema.String,
  output_digest: Schema.optional(Schema.String),
  replayed: Schema.Literal(true)
})

/** `GET /v1/runs`: a page of runs, newest first. */
export const RunListPageSchema = Schema.Struct({
  runs: Schema.Array(RunRow),
  limit: Schema.Int,
  offset: Schema.Int.annotations({ description: "the offset served (0 on a page asked by cursor)" }),
  next_cursor: Schema.NullOr(Schema.String).annotations({
    description: "send as cursor for the next page; null on the last page"
  })
}).annotations({ identifier: "RunListPage" })

const RunIdPath = Schema.Struct({ run_id: Schema.String })

/** The runs group. */
export class RunsApi extends HttpApiGroup.make("runs")
  .add(
    HttpApiEndpoint.post("create", "/v1/runs")
      .setPayload(RunRequest)
      .setHeaders(RequiredIdempotencyKey)
      .addSuccess(Run.annotations({ description: "the run settled (replayed true on a replay)" }))
      .addSuccess(Run.annotations({ description: "a replay of a run still pending" }), { status: 202 })
      .addError(wire(IdempotencyKeyRequired))
      .addError(wire(InvalidIdempotencyKey))
      .addError(wire(InvalidDecisionQuestions))
      .addError(wire(InvalidVerdictSchema))
      .addError(wire(UnknownModel))
      .addError(wire(InputTooLarge))
      .addError(wire(OrganizationSpendQuotaExhausted))
      .addError(wire(KeyQuotaExhausted))
      .addError(wire(KeyRateLimited))
      .addError(wire(OrganizationTokenQuotaExhausted))
      .addError(wire(IdempotencyConflict))
      .addError(wire(InsufficientCredits))
      .addError(wire(NoRouteAvailable))
      .addError(wire(DecisionUnavailable))
      .addError(wire(ProviderRateLimited))
      .addError(wire(ProviderUnavailable))
      .addError(wire(ProviderBadResponse))
      .addError(wire(BudgetExhausted))
      .addError(VerdictSchemaViolationWire)
      .addError(wire(DeadlineExceeded))
      .annotate(BodyLimit, LargeBodyLimit)
      .annotate(RequiredScope, "runs_write")
      .annotate(OpenApi.Summary, "Create a run (header Idempotency-Key required); answers once it has settled")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          request: CreateRunRequest,
          parameters: { [IdempotencyKeyHeaderName]: "ticket-4711-triage" },
          requiredHeaders: [IdempotencyKeyHeaderName],
          responses: {
            200: { summary: "a decision run, answered and settled", value: CompletedRun },
            202: { summary: "a replay of a run still pending", value: PendingRun }
          },
          timed: true
        })
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/runs")
      .setUrlParams(StrictStruct({
        limit: Schema.optional(wholeNumberFromString("a whole number of any length, clamped to 1-100; default 20")),
        offset: Schema.optional(
          wholeNumberFromString(
            "a whole number >= 0 of any length; default 0; one above 9007199254740991 (2^53 - 1) is served and " +
              "echoed as that (an empty page); not with cursor"
          ).pipe(Schema.nonNegative())
        ),
        cursor: Schema.optional(Schema.String.annotations({
          description: "the next_cursor of the previous page (opaque): the page after it, unaffected by runs created " +
            "since; not with offset (400 invalid_body), and a cursor this organization's run list did not issue is " +
            "400 invalid_body"
        }))
      }))
      .addSuccess(RunListPageSchema)
      .addError(wire(InvalidBody))
      .annotate(RequiredScope, "runs_read")
      .annotate(OpenApi.Summary, "The organization's runs, newest first (limit 1-100, default 20, clamped), by offset or cursor")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          parameters: { limit: "20", offset: "0", cursor: ExampleRunListCursor },
          responses: { 200: { summary: "the newest run, and the cursor of the next page", value: RunListPage } }
        })
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/runs/:run_id")
      .setPath(RunIdPath)
      .addSuccess(Run)
      .addError(wire(RunNotFound))
      .annotate(RequiredScope, "runs_read")
      .annotate(OpenApi.Summary, "One run, with its answers, usage and cost")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          parameters: { run_id: ExampleRunId },
          responses: { 200: { summary: "a settled decision run", value: StoredRun } }
        })
      )
  )
  .add(
    HttpApiEndpoint.get("stream", "/v1/runs/:run_id/stream")
      .setPath(RunIdPath)
      .addSuccess(
        Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/event-stream" })).annotations({
          description: "event `run` with the run as GET /v1/runs/{run_id} returns it, then event `end` with {}"
        })
      )
      .addError(wire(RunNotFound))
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
  .addError(wire(ScopeDenied))
  .middleware(JsonRequestShape)
  .middleware(Authentication)
{}
