/**
 * Examples of the usage and quota routes for the OpenAPI document, as the service answers them after the runs
 * examples' decision run (three model calls, 14 micro-USD). Plain data that imports nothing: UsageApi.ts checks each
 * against its wire schema where it applies it (`satisfies` the schema's encoded type), and
 * test/openapi/OpenApiDocument.test.ts validates each against the emitted document.
 */

const organization_id = "org_12e069dac0efdfa8003594da129ec6ae"

/** A month's window (what a request without bounds gets in November 2026). */
export const ExampleMonth = { start_at: "2026-11-01T00:00:00Z", end_at: "2026-12-01T00:00:00Z" }

const month = ExampleMonth

/** The hyphenated spelling of the runs examples' run, as usage routes answer it. */
export const ExampleUsageRunId = "run_01a20c15-76a3-7c4b-b1f3-b5159dc8a1b8"

/** The API key that made the examples' run. */
export const ExampleUsageKeyId = "key_01a20c15989c7745802fc12a4ef02105"

/**
 * A `cursor` of the ledger: the `next_cursor` of a page ending with an entry of the examples' run (cursors are valid
 * only for the organization whose ledger issued them).
 */
export const ExampleLedgerCursor = "MjAyNi0xMS0yNFQwNTo0NDoyMy4wMTc3MzNafDEwNDM.jpu6sGu07WilvHNRXjL9eu"

/** A three-day window (the daily series example). */
export const ExampleWindow = { start_at: "2026-11-22T00:00:00Z", end_at: "2026-11-25T00:00:00Z" }

const call = (provider_request_id: string, input_tokens: number, cost_micros: number) => ({
  run_id: ExampleUsageRunId,
  retry_ordinal: 0,
  provider: "local",
  model_id: "decision-1",
  provider_request_id,
  status: "succeeded",
  tokens: { input_tokens, output_tokens: 1, total_tokens: input_tokens + 1 },
  cost_micros,
  created_at: "2026-11-24T05:44:23Z",
  key_id: ExampleUsageKeyId
} as const)

const calls = [
  call("local_c7040133b8f24ed26bac068cb79d0171", 83, 5),
  call("local_9e08df43777bf7caf7c2550e8fb1bb52", 88, 5),
  call("local_5946e0021e2732f1a1dd9ea813b4487c", 71, 4)
]

/** `GET /v1/usage` for {@link ExampleMonth}. */
export const UsageRollupExample = {
  organization_id,
  window: month,
  runs: { total: 1, completed: 1, failed: 0, in_flight: 0 },
  tokens: { input_tokens: 242, output_tokens: 3, total_tokens: 245 },
  spend: { reserved_micros: 0, settled_micros: 14, unsettled_micros: 0 }
} as const

/** `GET /v1/usage?group_by=key` for {@link ExampleMonth}: the one key that made the month's run. */
export const UsageByKeyExample = {
  ...UsageRollupExample,
  groups: [{
    key_id: ExampleUsageKeyId,
    runs: UsageRollupExample.runs,
    tokens: UsageRollupExample.tokens,
    spend: UsageRollupExample.spend
  }]
} as const

/** `GET /v1/usage/ledger` for {@link ExampleMonth} with `limit=2`: the two newest model calls, and a next page. */
export const UsageLedgerExample = {
  organization_id,
  window: month,
  limit: 2,
  entries: [calls[2]!, calls[1]!],
  next_cursor: "MjAyNi0xMS0yNFQwNTo0NDoyMy4wMTE2MjBafDEwNDI.-QDWFnyBP4e7ptNjBOulMc"
} as const

const csvRecord = (entry: ReturnType<typeof call>) =>
  [
    entry.run_id,
    entry.retry_ordinal,
    entry.provider,
    entry.model_id,
    entry.provider_request_id,
    entry.status,
    entry.tokens.input_tokens,
    entry.tokens.output_tokens,
    entry.tokens.total_tokens,
    entry.cost_micros,
    entry.created_at,
    entry.key_id
  ].join(",") + "\r\n"

/** `GET /v1/usage/export?format=csv` for {@link ExampleMonth}: the header row, then the three calls, newest first. */
export const LedgerCsvExample = "run_id,retry_ordinal,provider,model_id,provider_request_id,status,input_tokens," +
  "output_tokens,total_tokens,cost_micros,created_at,key_id\r\n" + [...calls].reverse().map(csvRecord).join("")

/** `GET /v1/usage/daily` over {@link ExampleWindow}. */
export const UsageDailyExample = {
  organization_id,
  window: ExampleWindow,
  days: [
    { date: "2026-11-22", runs: 0, input_tokens: 0, output_tokens: 0, spend_micros: 0 },
    { date: "2026-11-23", runs: 0, input_tokens: 0, output_tokens: 0, spend_micros: 0 },
    { date: "2026-11-24", runs: 1, input_tokens: 242, output_tokens: 3, spend_micros: 14 }
  ]
} as const

/** `GET /v1/usage/runs/{run_id}`: the run's totals and its calls, oldest first. */
export const RunUsageExample = {
  run_id: ExampleUsageRunId,
  organization_id,
  kind: "decision",
  state: "completed",
  created_at: "2026-11-24T05:44:22Z",
  settled_at: "2026-11-24T05:44:23Z",
  tokens: { input_tokens: 242, output_tokens: 3, total_tokens: 245 },
  cost_micros: 14,
  reserved_micros: 0,
  calls
} as const

/** `GET /v1/quota` of an organization with a spend limit and no token limit. */
export const QuotaExample = {
  organization_id,
  period: month,
  period_spend_limit_micros: 50_000_000,
  period_token_limit: null,
  spend_settled_micros: 14,
  spend_reserved_micros: 0,
  spend_remaining_micros: 49_999_986,
  tokens_settled: 245,
  tokens_reserved: 0,
  tokens_remaining: null
} as const
