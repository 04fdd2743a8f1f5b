/**
 * An organization's money position, read while holding its account row (the organization's lock): billing, balance,
 * limits, what one month has settled, and what is escrowed, i.e. committed but not yet settled: the leases' slices
 * (every holder's, used or not) and the holds of runs admitted outside a slice. The escrow rule of the whole ledger is
 * that escrowed credit never exceeds the balance and settled + escrowed spend and tokens never exceed their limits;
 * every change that takes from what is free (a lease grant, an admission outside a lease) is decided here.
 */
import type { SqlError } from "effect/sql/SqlError"
import { Effect } from "effect"
import type pg from "pg"
import type { Statement } from "../db/LedgerSql.js"
import { type Step, stepsInTransaction } from "../db/OneRoundTrip.js"

/** An organization's position for one period. */
export interface Position {
  readonly billing: boolean
  readonly balance: number
  readonly creditEscrowed: number
  readonly spendLimit: number | null
  readonly tokenLimit: number | null
  readonly spendSettled: number
  readonly tokensSettled: number
  readonly spendEscrowed: number
  readonly tokensEscrowed: number
}

/** Credit not escrowed (with billing on): what a new lease or an admission outside a lease may take. */
export const creditFree = (position: Position): number => position.balance - position.creditEscrowed

/** Spend quota not settled or escrowed; unlimited without a limit. */
export const spendFree = (position: Position): number =>
  position.spendLimit === null ? Number.POSITIVE_INFINITY : position.spendLimit - position.spendSettled - position.spendEscrowed

/** Token quota not settled or escrowed; unlimited without a limit. */
export const tokensFree = (position: Position): number =>
  position.tokenLimit === null ? Number.POSITIVE_INFINITY : position.tokenLimit - position.tokensSettled - position.tokensEscrowed

const openAccount: Statement = {
  name: "ledger_open_account",
  text: "INSERT INTO credit_accounts (organization_id) SELECT id FROM organizations WHERE id = $1 ON CONFLICT DO NOTHING"
}

// A run holds against a slice only in the dimensions the slice limits (billing, a spend or token limit); its other
// holds are escrowed here as if it had been admitted outside any lease, so a limit set while it runs still counts it.
// The columns are the fields of `Position`.
const positionStatement: Statement = {
  name: "ledger_position",
  text: `SELECT o.billing_enabled AS billing, a.balance_micros AS balance,
      l.period_spend_limit_micros AS "spendLimit", l.period_token_limit AS "tokenLimit",
      COALESCE(p.spend_settled_micros, 0) AS "spendSettled", COALESCE(p.tokens_settled, 0) AS "tokensSettled",
      (COALESCE((SELECT sum(credit_micros) FROM ledger_leases WHERE organization_id = $1), 0) +
        COALESCE((SELECT sum(r.hold_micros) FROM runs r LEFT JOIN ledger_leases x ON x.id = r.lease_id
          WHERE r.organization_id = $1 AND r.held AND r.hold_credit AND (x.id IS NULL OR NOT x.billing)), 0))::bigint AS "creditEscrowed",
      (COALESCE((SELECT sum(spend_micros) FROM ledger_leases WHERE organization_id = $1 AND period = $2::date), 0) +
        COALESCE((SELECT sum(r.hold_micros) FROM runs r LEFT JOIN ledger_leases x ON x.id = r.lease_id
          WHERE r.organization_id = $1 AND r.held AND r.period = $2::date AND (x.id IS NULL OR NOT x.spend_limited)), 0))::bigint AS "spendEscrowed",
      (COALESCE((SELECT sum(tokens) FROM ledger_leases WHERE organization_id = $1 AND period = $2::date), 0) +
        COALESCE((SELECT sum(r.hold_tokens) FROM runs r LEFT JOIN ledger_leases x ON x.id = r.lease_id
          WHERE r.organization_id = $1 AND r.held AND r.period = $2::date AND (x.id IS NULL OR NOT x.tokens_limited)), 0))::bigint AS "tokensEscrowed"
    FROM organizations o JOIN credit_accounts a ON a.organization_id = o.id
    LEFT JOIN quota_limits l ON l.organization_id = o.id
    LEFT JOIN quota_periods p ON p.organization_id = o.id AND p.period = $2::date
    WHERE o.id = $1`
}

/** Locks an organization's account row: the organization's lock (inside the caller's transaction). */
export const lockAccount: Statement = {
  name: "ledger_lock_account",
  text: "SELECT 1 FROM credit_accounts WHERE organization_id = $1 FOR UPDATE"
}

/**
 * Locks the organization's account row (opening it if it has none) and reads its position for `period`, inside the
 * caller's transaction, then runs `after` (reads under the lock): one round trip where the connection has prepared
 * them (db/OneRoundTrip.ts). Gives the position (none when the organization does not exist) and the rows of each of
 * `after`, in order.
 */
export const lockPositionAnd = (
  client: pg.PoolClient,
  organizationId: string,
  period: string,
  after: ReadonlyArray<Step>
): Effect.Effect<{ readonly position: Position | undefined; readonly after: ReadonlyArray<ReadonlyArray<unknown>> }, SqlError> =>
  Effect.map(
    stepsInTransaction(client, [
      { statement: openAccount, values: [organizationId] },
      // The lock first, the read after it: under READ COMMITTED a statement reads the snapshot it started with, so
      // sums read by the statement that waited for the lock would miss what the previous holder committed.
      { statement: lockAccount, values: [organizationId] },
      { statement: positionStatement, values: [organizationId, period] },
      ...after
    ]),
    (results) => ({ position: results[2]![0] as Position | undefined, after: results.slice(3) })
  )
