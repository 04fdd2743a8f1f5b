/**
 * Period quotas: per organization, optional limits on spend and tokens per UTC calendar month (`quota_limits`), and
 * per month the spend and tokens settled and held by runs in flight (`quota_periods`). A run holds its whole spend
 * ceiling and its token reservation in the month of its creation until it settles, and is refused when settled +
 * held + its ask would pass a limit: admission and settlement (`arbiter_admit`, `arbiter_settle`) move the counters;
 * this module sets the limits and reads them.
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer } from "effect"

/** An organization's limits and one month's counters. */
export interface QuotaState {
  readonly spendLimitMicros: number | null
  readonly tokenLimit: number | null
  readonly spendSettledMicros: number
  readonly spendReservedMicros: number
  readonly tokensSettled: number
  readonly tokensReserved: number
}

/** The first day of a date's UTC month, as `YYYY-MM-01`. */
export const periodOf = (date: Date): string => `${date.toISOString().slice(0, 7)}-01`

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return {
    /** The limits and a month's counters (call it while holding the organization's account lock). */
    read: (organizationId: string, period: string) =>
      Effect.map(
        sql<{
          spend_limit: number | null
          token_limit: number | null
          spend_settled: number | null
          spend_reserved: number | null
          tokens_settled: number | null
          tokens_reserved: number | null
        }>`SELECT l.period_spend_limit_micros AS spend_limit, l.period_token_limit AS token_limit,
             p.spend_settled_micros AS spend_settled, p.spend_reserved_micros AS spend_reserved,
             p.tokens_settled, p.tokens_reserved
           FROM (SELECT ${organizationId}::text AS organization_id) o
           LEFT JOIN quota_limits l ON l.organization_id = o.organization_id
           LEFT JOIN quota_periods p ON p.organization_id = o.organization_id AND p.period = ${period}::date`,
        ([row]): QuotaState => ({
          spendLimitMicros: row?.spend_limit ?? null,
          tokenLimit: row?.token_limit ?? null,
          spendSettledMicros: row?.spend_settled ?? 0,
          spendReservedMicros: row?.spend_reserved ?? 0,
          tokensSettled: row?.tokens_settled ?? 0,
          tokensReserved: row?.tokens_reserved ?? 0
        })
      ),
    /** Sets or clears an organization's limits (null: none). */
    setLimits: (organizationId: string, limits: { spendLimitMicros: number | null; tokenLimit: number | null }) =>
      sql`INSERT INTO quota_limits (organization_id, period_spend_limit_micros, period_token_limit)
        VALUES (${organizationId}, ${limits.spendLimitMicros}, ${limits.tokenLimit})
        ON CONFLICT (organization_id) DO UPDATE
          SET period_spend_limit_micros = excluded.period_spend_limit_micros,
              period_token_limit = excluded.period_token_limit`.pipe(Effect.asVoid)
  }
})

/** Period quotas. */
export class QuotaLedger extends Context.Tag("QuotaLedger")<QuotaLedger, Effect.Effect.Success<typeof make>>() {
  /** The ledger over the SQL client. */
  static readonly layer = Layer.effect(QuotaLedger, make)
}
