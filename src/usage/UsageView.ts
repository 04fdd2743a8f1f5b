/**
 * Usage figures on the wire (schema/UsageApi.ts): timestamps at second precision, run ids hyphenated, token counts
 * with their total, and null (never an omitted field) where a value is absent.
 */
import { Option } from "effect"
import { formatTimestamp } from "../../schema/Ids.js"
import type { Quota, RunUsage, UsageDaily, UsageLedger, UsageRollup } from "../../schema/UsageApi.js"
import { encodeCursor, hyphenatedRunId } from "../runs/RunView.js"
import { LedgerCursor } from "./LedgerPaging.js"
import type { GroupedRollup, LedgerPage, QuotaView } from "./Usage.js"
import type { GroupBy, GroupRow } from "./UsageGroups.js"
import type { DayRow, LedgerRow, RollupRow, RunUsageRow } from "./UsageRepo.js"
import type { Window } from "./Window.js"

const windowView = (window: Window) => ({ start_at: formatTimestamp(window.start), end_at: formatTimestamp(window.end) })

const tokens = (input: number, output: number) => ({
  input_tokens: input,
  output_tokens: output,
  total_tokens: input + output
})

const entryView = (row: LedgerRow) => ({
  run_id: hyphenatedRunId(row.run_id),
  retry_ordinal: row.retry_ordinal,
  provider: row.provider,
  model_id: row.model_id,
  provider_request_id: row.provider_request_id,
  status: row.status,
  tokens: tokens(row.input_tokens, row.output_tokens),
  cost_micros: row.cost_micros,
  created_at: formatTimestamp(row.created_at),
  key_id: row.key_id
})

const figures = (row: RollupRow) => ({
  runs: { total: row.total, completed: row.completed, failed: row.failed, in_flight: row.in_flight },
  tokens: tokens(row.input_tokens, row.output_tokens),
  spend: {
    reserved_micros: row.reserved_micros,
    settled_micros: row.settled_micros,
    unsettled_micros: row.unsettled_micros
  }
})

/** The `GET /v1/usage` body. */
export const rollupView = (organizationId: string, window: Window, row: RollupRow): typeof UsageRollup.Type => ({
  organization_id: organizationId,
  window: windowView(window),
  ...figures(row)
})

/** The `GET /v1/usage?group_by=...` body: the totals, then each group under `key_id` or `model_id`. */
export const groupedRollupView = (
  organizationId: string,
  window: Window,
  by: GroupBy,
  grouped: GroupedRollup
): typeof UsageRollup.Type => ({
  ...rollupView(organizationId, window, grouped.totals),
  groups: by === "key"
    ? grouped.groups.map((group: GroupRow) => ({ key_id: group.group_id, ...figures(group) }))
    : grouped.groups.map((group: GroupRow) => ({ model_id: group.group_id, ...figures(group) }))
})

/** The `GET /v1/usage/ledger` body; `next_cursor` names the page's last entry when more follow. */
export const ledgerView = (
  organizationId: string,
  window: Window,
  limit: number,
  page: LedgerPage
): typeof UsageLedger.Type => ({
  organization_id: organizationId,
  window: windowView(window),
  limit,
  entries: page.entries.map(entryView),
  next_cursor: Option.match(page.next, {
    onNone: () => null,
    onSome: (key) => encodeCursor(LedgerCursor, organizationId, key)
  })
})

/** The `GET /v1/usage/daily` body. */
export const dailyView = (organizationId: string, window: Window, days: ReadonlyArray<DayRow>): typeof UsageDaily.Type => ({
  organization_id: organizationId,
  window: windowView(window),
  days: days.map((day) => ({
    date: day.date,
    runs: day.runs,
    input_tokens: day.input_tokens,
    output_tokens: day.output_tokens,
    spend_micros: day.spend_micros
  }))
})

/** The `GET /v1/usage/runs/{run_id}` body. */
export const runUsageView = (
  organizationId: string,
  found: { readonly run: RunUsageRow; readonly calls: ReadonlyArray<LedgerRow> }
): typeof RunUsage.Type => ({
  run_id: hyphenatedRunId(found.run.id),
  organization_id: organizationId,
  kind: found.run.kind,
  state: found.run.state,
  created_at: formatTimestamp(found.run.created_at),
  settled_at: found.run.settled_at === null ? null : formatTimestamp(found.run.settled_at),
  tokens: tokens(found.run.input_tokens, found.run.output_tokens),
  cost_micros: found.run.cost_micros,
  reserved_micros: found.run.reserved_micros,
  calls: found.calls.map(entryView)
})

/** The `GET /v1/quota` body. */
export const quotaView = (organizationId: string, quota: QuotaView): typeof Quota.Type => ({
  organization_id: organizationId,
  period: windowView(quota.period),
  period_spend_limit_micros: quota.spendLimitMicros,
  period_token_limit: quota.tokenLimit,
  spend_settled_micros: quota.spendSettledMicros,
  spend_reserved_micros: quota.spendReservedMicros,
  spend_remaining_micros: quota.spendRemainingMicros,
  tokens_settled: quota.tokensSettled,
  tokens_reserved: quota.tokensReserved,
  tokens_remaining: quota.tokensRemaining
})
