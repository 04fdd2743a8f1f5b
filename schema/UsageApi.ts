/**
 * Usage and quota (spec, "Usage and quota", "Usage, ledger and other resources"; decisions.md, "Usage and quota" and
 * "Extensions beyond the contract": `group_by`, the ledger's `key_id`, `offset` and `cursor`, the CSV export).
 * Query problems are the plain-text `400 Failed to deserialize query string` (unknown, repeated or non-whole-number
 * parameters); the rules on values (window, limit, offset, cursor, key_id, group_by, format) are checked by the
 * service and answer `400 invalid_parameter`, so those travel as plain strings here. Run ids in these responses are
 * hyphenated; optional fields send null.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "./Auth.js"
import { PlainRequestShape } from "./Boundary.js"
import { documentedValue } from "./Documented.js"
import { InvalidParameter, RunNotFound, wire } from "./Errors.js"
import { OrganizationId, Timestamp } from "./Ids.js"
import { operationDocs } from "./OperationDocs.js"
import {
  ExampleLedgerCursor,
  ExampleMonth,
  ExampleUsageKeyId,
  ExampleUsageRunId,
  ExampleWindow,
  LedgerCsvExample,
  QuotaExample,
  RunUsageExample,
  UsageDailyExample,
  UsageByKeyExample,
  UsageLedgerExample
} from "./UsageExamples.js"
import { PlainRouteErrors } from "./RouteErrors.js"
import { RequiredScope } from "./Scope.js"
import { StrictStruct } from "./Strict.js"

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

const TimestampParam = Schema.String.annotate({
  description: "YYYY-MM-DDTHH:MM:SSZ; send both bounds or neither (default: the current UTC calendar month)"
})

const WindowParams = {
  start_at: Schema.optionalKey(TimestampParam),
  end_at: Schema.optionalKey(TimestampParam)
}

/** `limit` of the ledger: a whole number (anything else is the plain-text query rejection). */
const LimitParam = Schema.String.check(Schema.isPattern(/^-?\d+$/u, { message: "expected a whole number" })).annotate({
  description: "1 to 200, default 50; above 200 clamped to 200; below 1 is invalid_parameter"
})

/** `offset` of the ledger: a whole number (anything else is the plain-text query rejection). */
const OffsetParam = Schema.String.check(Schema.isPattern(/^-?\d+$/u, { message: "expected a whole number" })).annotate({
  description: "entries to skip, default 0; above 9007199254740991 clamped to it; below 0, or with cursor, is " +
    "invalid_parameter"
})

const CursorParam = Schema.String.annotate({
  description: "the next_cursor of the previous page (opaque): the entries after it, unaffected by entries recorded " +
    "since; not with offset; a cursor this organization's ledger did not issue is invalid_parameter"
})

const KeyIdParam = Schema.String.annotate({
  description: "only the entries of this API key's runs (key_ + 32 hex; another organization's key matches nothing)"
})

const isString = (input: unknown): input is string => typeof input === "string"

const GroupByParam = documentedValue(isString, "string", {
  type: "string",
  description: "key or model: adds groups, the rollup per API key (null: console sessions) or per model; " +
    "anything else is invalid_parameter",
  enum: ["key", "model"]
})

const FormatParam = documentedValue(isString, "string", {
  type: "string",
  description: "csv (the default and only format); anything else is invalid_parameter",
  enum: ["csv"]
})

/** The half-open window `[start_at, end_at)` a response covers. */
export const UsageWindow = Schema.Struct({ start_at: Timestamp, end_at: Timestamp })

/** Token counts. */
export const TokenCounts = Schema.Struct({ input_tokens: Count, output_tokens: Count, total_tokens: Count })

const RunCounts = Schema.Struct({ total: Count, completed: Count, failed: Count, in_flight: Count })

const Spend = Schema.Struct({
  reserved_micros: Count.annotate({ description: "holds of the window's runs still in flight" }),
  settled_micros: Count.annotate({ description: "cost of the window's settled runs" }),
  unsettled_micros: Count.annotate({ description: "cost of calls already answered for runs not yet settled" })
})

/** One API key's part of the rollup (`group_by=key`): its runs' figures; `key_id` null for console sessions. */
export const UsageKeyGroup = Schema.Struct({
  key_id: Schema.NullOr(Schema.String),
  runs: RunCounts,
  tokens: TokenCounts,
  spend: Spend
}).annotate({ identifier: "UsageKeyGroup" })

/**
 * One model's part of the rollup (`group_by=model`): the tokens and cost of its calls; the runs whose last call was
 * its (counts and holds); `model_id` null for runs without a call.
 */
export const UsageModelGroup = Schema.Struct({
  model_id: Schema.NullOr(Schema.String),
  runs: RunCounts,
  tokens: TokenCounts,
  spend: Spend
}).annotate({ identifier: "UsageModelGroup" })

/** `GET /v1/usage`: runs created in the window, their tokens and spend (and, with `group_by`, its groups). */
export const UsageRollup = Schema.Struct({
  organization_id: OrganizationId,
  window: UsageWindow,
  runs: RunCounts,
  tokens: TokenCounts,
  spend: Spend,
  groups: Schema.optionalKey(
    Schema.Union([Schema.Array(UsageKeyGroup), Schema.Array(UsageModelGroup)]).annotate({
      description: "only with group_by: largest settled spend first, then by id (null last); they sum to the totals"
    })
  )
}).annotate({ identifier: "UsageRollup" })

/** One model call. */
export const LedgerEntry = Schema.Struct({
  run_id: Schema.String.annotate({ description: "run_ + hyphenated uuid" }),
  retry_ordinal: Count,
  provider: Schema.String,
  model_id: Schema.String,
  provider_request_id: Schema.NullOr(Schema.String),
  status: Schema.Literals(["succeeded", "failed"]),
  tokens: TokenCounts,
  cost_micros: Count,
  created_at: Timestamp,
  key_id: Schema.NullOr(Schema.String).annotate({
    description: "the API key whose run made the call; null for a console session's run"
  })
}).annotate({ identifier: "LedgerEntry" })

/** `GET /v1/usage/ledger`: the window's model calls, newest first. */
export const UsageLedger = Schema.Struct({
  organization_id: OrganizationId,
  window: UsageWindow,
  limit: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 200 })),
  entries: Schema.Array(LedgerEntry),
  next_cursor: Schema.NullOr(Schema.String).annotate({
    description: "send as cursor for the next page; null on the last page"
  })
}).annotate({ identifier: "UsageLedger" })

/** One UTC day of the daily series. */
export const UsageDay = Schema.Struct({
  date: Schema.String.annotate({ description: "YYYY-MM-DD (UTC)" }),
  runs: Count,
  input_tokens: Count,
  output_tokens: Count,
  spend_micros: Count.annotate({ description: "cost of the runs created that day" })
})

/** `GET /v1/usage/daily`: every UTC day of the window, oldest first, zero-filled. */
export const UsageDaily = Schema.Struct({
  organization_id: OrganizationId,
  window: UsageWindow,
  days: Schema.Array(UsageDay)
}).annotate({ identifier: "UsageDaily" })

/** `GET /v1/usage/runs/{run_id}`: one run's usage and its model calls, oldest first. */
export const RunUsage = Schema.Struct({
  run_id: Schema.String.annotate({ description: "run_ + hyphenated uuid" }),
  organization_id: OrganizationId,
  kind: Schema.Literals(["decision", "verdict"]),
  state: Schema.Literals(["pending", "completed", "failed"]),
  created_at: Timestamp,
  settled_at: Schema.NullOr(Timestamp),
  tokens: TokenCounts,
  cost_micros: Count,
  reserved_micros: Count.annotate({ description: "the spend hold the run still has (0 once released)" }),
  calls: Schema.Array(LedgerEntry)
}).annotate({ identifier: "RunUsage" })

/** `GET /v1/quota`: the current UTC month's limits, consumption and what remains (null where no limit is set). */
export const Quota = Schema.Struct({
  organization_id: OrganizationId,
  period: UsageWindow,
  period_spend_limit_micros: Schema.NullOr(Count),
  period_token_limit: Schema.NullOr(Count),
  spend_settled_micros: Count,
  spend_reserved_micros: Count,
  spend_remaining_micros: Schema.NullOr(Count),
  tokens_settled: Count.annotate({ description: "input plus output tokens" }),
  tokens_reserved: Count,
  tokens_remaining: Schema.NullOr(Count)
}).annotate({ identifier: "Quota" })

/** `GET /v1/usage/export`: the ledger as CSV. */
const LedgerCsv = Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/csv; charset=utf-8" })).annotate({
  description: "RFC 4180: a header row, then one record per ledger entry, newest first, CRLF line ends; the entry's " +
    "fields with tokens spread into input_tokens, output_tokens and total_tokens; null is an empty field. Streamed " +
    "(chunked) in pages, whatever the window's size."
})

/** The usage group. */
export class UsageApi extends HttpApiGroup.make("usage")
  .add(
    HttpApiEndpoint.get("rollup", "/v1/usage", {
      query: StrictStruct({ ...WindowParams, group_by: Schema.optionalKey(GroupByParam) }),
      success: UsageRollup,
      error: [...PlainRouteErrors, wire(InvalidParameter)]
    })
      .annotate(RequiredScope, "usage_read")
      .annotate(OpenApi.Summary, "Runs, tokens and spend of the runs created in the window")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          parameters: { ...ExampleMonth, group_by: "key" },
          responses: {
            200: {
              summary: "a month with one decision run, by key",
              value: UsageByKeyExample satisfies typeof UsageRollup.Encoded
            }
          }
        })
      )
  )
  .add(
    HttpApiEndpoint.get("ledger", "/v1/usage/ledger", {
      query: StrictStruct({
        ...WindowParams,
        limit: Schema.optionalKey(LimitParam),
        key_id: Schema.optionalKey(KeyIdParam),
        offset: Schema.optionalKey(OffsetParam),
        cursor: Schema.optionalKey(CursorParam)
      }),
      success: UsageLedger,
      error: [...PlainRouteErrors, wire(InvalidParameter)]
    })
      .annotate(RequiredScope, "usage_read")
      .annotate(OpenApi.Summary, "One entry per model call recorded in the window, newest first, by offset or cursor")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          parameters: { ...ExampleMonth, limit: "2", key_id: ExampleUsageKeyId, offset: "0", cursor: ExampleLedgerCursor },
          responses: {
            200: {
              summary: "the two newest model calls",
              value: UsageLedgerExample satisfies typeof UsageLedger.Encoded
            }
          }
        })
      )
  )
  .add(
    HttpApiEndpoint.get("export", "/v1/usage/export", {
      query: StrictStruct({
        ...WindowParams,
        format: Schema.optionalKey(FormatParam),
        key_id: Schema.optionalKey(KeyIdParam)
      }),
      success: LedgerCsv,
      error: [...PlainRouteErrors, wire(InvalidParameter)]
    })
      .annotate(RequiredScope, "usage_read")
      .annotate(OpenApi.Summary, "The window's ledger as CSV, streamed")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          parameters: { ...ExampleMonth, format: "csv", key_id: ExampleUsageKeyId },
          responses: { 200: { summary: "the month's three model calls", value: LedgerCsvExample } }
        })
      )
  )
  .add(
    HttpApiEndpoint.get("daily", "/v1/usage/daily", {
      query: StrictStruct(WindowParams),
      success: UsageDaily,
      error: [...PlainRouteErrors, wire(InvalidParameter)]
    })
      .annotate(RequiredScope, "usage_read")
      .annotate(OpenApi.Summary, "One row per UTC day a window of at most 92 days touches, oldest first, zero-filled")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          parameters: ExampleWindow,
          responses: {
            200: {
              summary: "three days, one with a run",
              value: UsageDailyExample satisfies typeof UsageDaily.Encoded
            }
          }
        })
      )
  )
  .add(
    HttpApiEndpoint.get("run", "/v1/usage/runs/:run_id", {
      params: Schema.Struct({ run_id: Schema.String }),
      success: RunUsage,
      error: [...PlainRouteErrors, wire(RunNotFound)]
    })
      .annotate(RequiredScope, "usage_read")
      .annotate(OpenApi.Summary, "Usage of one run (either id spelling) with its model calls")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          parameters: { run_id: ExampleUsageRunId },
          responses: {
            200: {
              summary: "a decision run of three model calls",
              value: RunUsageExample satisfies typeof RunUsage.Encoded
            }
          }
        })
      )
  )
  .add(
    HttpApiEndpoint.get("quota", "/v1/quota", { success: Quota, error: PlainRouteErrors })
      .annotate(RequiredScope, "usage_read")
      .annotate(OpenApi.Summary, "Limits, consumption and remaining amounts of the current UTC month")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          responses: {
            200: {
              summary: "a 50-dollar spend limit, no token limit",
              value: QuotaExample satisfies typeof Quota.Encoded
            }
          }
        })
      )
  )
  .middleware(PlainRequestShape)
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "What the organization used and spent: the rollup (by key or model), the ledger of model calls and its CSV " +
      "export, a daily series, one run's usage, and the quota."
  )
{}
