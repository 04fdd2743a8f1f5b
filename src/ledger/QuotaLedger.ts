/**
 * Period quotas: an organization's optional limits on spend and tokens per UTC calendar month (`quota_limits`) and,
 * per month, the spend and tokens settled (`quota_periods`). A run reserves its whole spend ceiling and its token
 * reservation in the month of its admission until it settles (spec, Period quotas); what a lease slice held is
 * released by the lease (Leases.ts). The run ledger applies `reserve` at admission and carries `settleSql` in its
 * settlement statement, so a run's quota is held and settled by this service's rule inside the ledger's statements.
 */
import { SqlClient } from "effect/sql"
import { Context, Effect, Layer } from "effect"
import type { DatabaseUnavailable } from "../../schema/Errors.js"
import { orUnavailable, transactionOrUnavailable } from "../db/Unavailable.js"
import type { Statement } from "../db/LedgerSql.js"
import { revokeLeases } from "./Leases.js"
import type { Position } from "./Position.js"

/** An organization's limits and one month's counters, as `GET /v1/quota` shows them. */
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

/** Why the quota cannot hold a run: which limit, and the numbers a refusal names (spec, Period quotas). */
export interface QuotaRefusal {
  readonly quota: "spend" | "tokens"
  readonly limit: number
  readonly used: number
  readonly held: number
  readonly asked: number
}

const reserve = (position: Position, ask: { readonly micros: number; readonly tokens: number }): QuotaRefusal | undefined => {
  if (position.spendLimit !== null && position.spendSettled + position.spendEscrowed + ask.micros > position.spendLimit) {
    return { quota: "spend", limit: position.spendLimit, used: position.spendSettled, held: position.spendEscrowed, asked: ask.micros }
  }
  if (position.tokenLimit !== null && position.tokensSettled + position.tokensEscrowed + ask.tokens > position.tokenLimit) {
    return { quota: "tokens", limit: position.tokenLimit, used: position.tokensSettled, held: position.tokensEscrowed, asked: ask.tokens }
  }
  return undefined
}

const settleSql = `
  periods AS (
    INSERT INTO quota_periods AS q (organization_id, period, spend_settled_micros, tokens_settled)
    SELECT organization_id, period, sum(cost), sum(tokens) FROM moves
    GROUP BY organization_id, period HAVING sum(cost) <> 0 OR sum(tokens) <> 0
    ORDER BY organization_id, period
    ON CONFLICT (organization_id, period) DO UPDATE
      SET spend_settled_micros = q.spend_settled_micros + excluded.spend_settled_micros,
          tokens_settled = q.tokens_settled + excluded.tokens_settled
  )`

// One row, whatever the organization has, with the fields of `QuotaState`.
const readStatement: Statement = {
  name: "quota_read",
  text: `SELECT l.period_spend_limit_micros AS "spendLimitMicros", l.period_token_limit AS "tokenLimit",
      COALESCE(p.spend_settled_micros, 0) AS "spendSettledMicros", COALESCE(p.tokens_settled, 0) AS "tokensSettled",
      COALESCE((SELECT sum(hold_micros) FROM runs WHERE organization_id = $1 AND held AND period = $2::date), 0)::bigint AS "spendReservedMicros",
      COALESCE((SELECT sum(hold_tokens) FROM runs WHERE organization_id = $1 AND held AND period = $2::date), 0)::bigint AS "tokensReserved"
    FROM (SELECT $1::text AS organization_id) o
    LEFT JOIN quota_limits l ON l.organization_id = o.organization_id
    LEFT JOIN quota_periods p ON p.organization_id = o.organization_id AND p.period = $2::date`
}

export interface QuotaLedgerService {
  /**
   * Admission's quota rule for a run asking `micros` of spend and `tokens` of tokens, against a position read under
   * the organization's lock: undefined when settled + escrowed + the ask fits every limit, else the first it passes.
   */
  readonly reserve: typeof reserve
  /**
   * Settlement's quota part, a fragment of the run ledger's settlement statement over its `moves` (one row per run
   * with the spend and tokens billed now): each month's settled counters grow by what its runs billed.
   */
  readonly settleSql: string
  /** The limits, one month's settled counters and the holds of runs in flight that month (not the leases). */
  readonly read: (organizationId: string, period: string) => Effect.Effect<QuotaState, DatabaseUnavailable>
  /**
   * Sets or clears the limits (null: none) and revokes the organization's leases, so every process admits under
   * the new limits from its next run on.
   */
  readonly setLimits: (
    organizationId: string,
    limits: { readonly spendLimitMicros: number | null; readonly tokenLimit: number | null }
  ) => Effect.Effect<void, DatabaseUnavailable>
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return QuotaLedger.of({
    reserve,
    settleSql,
    read: (organizationId, period) =>
      orUnavailable(Effect.map(sql.unsafe<QuotaState>(readStatement.text, [organizationId, period]), ([row]) => row!)),
    setLimits: (organizationId, limits) =>
      transactionOrUnavailable(sql, Effect.gen(function*() {
        yield* sql`SELECT 1 FROM credit_accounts WHERE organization_id = ${organizationId} FOR UPDATE`
        yield* sql`INSERT INTO quota_limits (organization_id, period_spend_limit_micros, period_token_limit)
          VALUES (${organizationId}, ${limits.spendLimitMicros}, ${limits.tokenLimit})
          ON CONFLICT (organization_id) DO UPDATE
            SET period_spend_limit_micros = excluded.period_spend_limit_micros,
                period_token_limit = excluded.period_token_limit`
        yield* sql.unsafe(revokeLeases.text, [organizationId])
      }))
  })
})

/** Period quotas. */
export class QuotaLedger extends Context.Service<QuotaLedger, QuotaLedgerService>()("QuotaLedger") {
  static readonly layer = Layer.effect(QuotaLedger, make)
}
