/**
 * Prepaid credit: one account per organization (`credit_accounts`: the balance, whose row is also the organization's
 * lock) and its transactions (`credit_transactions`, whose amounts always sum to the balance). With billing on, a run
 * holds its spend ceiling against free credit (Position.ts) until it settles, when the cost billed is captured into
 * the UTC day's usage transaction; with billing off nothing is held or debited. Credit is added by grants, purchases
 * and recharges, once per external reference. The run ledger applies `hold` at admission and carries `captureSql` in
 * its settlement statement, as it does the quota ledger's rule.
 */
import { SqlClient } from "effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import type { DatabaseUnavailable } from "../../schema/Errors.js"
import { orUnavailable, transactionOrUnavailable } from "../db/Unavailable.js"
import { revokeLeases } from "./Leases.js"
import { creditFree, type Position } from "./Position.js"

/** What a credit transaction records. */
export type TransactionKind = "signup_credit" | "purchase" | "auto_recharge" | "grant" | "usage" | "refund"

/** Why credit cannot hold a run: what is available and what the run asked. */
export interface CreditRefusal {
  readonly available: number
  readonly asked: number
}

const hold = (position: Position, micros: number): CreditRefusal | undefined =>
  !position.billing || creditFree(position) >= micros ? undefined : { available: creditFree(position), asked: micros }

const captureSql = `
  captured AS (
    UPDATE credit_accounts AS a SET balance_micros = a.balance_micros - d.cost
    FROM (SELECT organization_id, sum(cost) AS cost FROM moves WHERE hold_credit GROUP BY organization_id) d
    WHERE a.organization_id = d.organization_id AND d.cost <> 0
      AND a.organization_id = ANY (ARRAY(SELECT organization_id FROM moves WHERE hold_credit))
    RETURNING a.organization_id, a.balance_micros
  ),
  usage_day AS (
    INSERT INTO credit_transactions AS t (organization_id, id, kind, amount_micros, description, created_at, updated_at)
    SELECT organization_id, $3, 'usage', -sum(cost), $4, $5::timestamptz, $5::timestamptz FROM moves
    WHERE hold_credit GROUP BY organization_id HAVING sum(cost) > 0
    ORDER BY organization_id
    ON CONFLICT (organization_id, id) DO UPDATE
      SET amount_micros = t.amount_micros + excluded.amount_micros, updated_at = excluded.updated_at
  )`

const usageTransaction = (now: Date): { readonly id: string; readonly description: string } => {
  const day = now.toISOString().slice(0, 10)
  return { id: `txn_usage_${day.replace(/-/g, "")}`, description: `Decision model usage on ${day} (UTC)` }
}

export interface CreditStoreService {
  /**
   * Admission's credit rule for a run asking `micros`, against a position read under the organization's lock:
   * undefined when billing is off or the free credit covers it, else the refusal (spec: 402).
   */
  readonly hold: (position: Position, micros: number) => CreditRefusal | undefined
  /**
   * Settlement's credit part, a fragment of the settlement statement over its `moves`: a run holding credit has the
   * cost billed now captured from its organization's balance, and the UTC day's usage transaction grows by as much
   * (`$3` its id, `$4` its description, from `usageTransaction`; `$5` the settlement's time); gives the balances after.
   */
  readonly captureSql: string
  /** The usage transaction a settlement at `now` adds to (`captureSql`'s `$3` and `$4`). */
  readonly usageTransaction: typeof usageTransaction
  /** Opens the account of a new organization (inside its creation transaction). */
  readonly open: (organizationId: string) => Effect.Effect<void, DatabaseUnavailable>
  /**
   * Adds credit with its transaction, in one statement (`kind` grant, signup_credit, purchase, auto_recharge or
   * refund). An `externalRef` already recorded adds nothing and returns false: each purchase is credited once.
   */
  readonly credit: (input: {
    readonly organizationId: string
    readonly id: string
    readonly kind: Exclude<TransactionKind, "usage">
    readonly amountMicros: number
    readonly description: string
    readonly externalRef?: string | undefined
  }) => Effect.Effect<boolean, DatabaseUnavailable>
  /** Balances of organizations, with the credit holds of their runs in flight (not the leases). */
  readonly balances: (organizationIds: ReadonlyArray<string>) => Effect.Effect<
    ReadonlyArray<{ readonly organization_id: string; readonly balance_micros: number; readonly reserved_micros: number }>,
    DatabaseUnavailable
  >
  /** The organization's latest transactions, newest first. */
  readonly transactions: (organizationId: string, limit: number) => Effect.Effect<
    ReadonlyArray<{ id: string; kind: TransactionKind; amount_micros: number; description: string; created_at: Date }>,
    DatabaseUnavailable
  >
  /**
   * Turns billing on or off and revokes the organization's leases (their credit slices were granted under the other
   * setting), so every process admits under the new one from its next run on; none when there is no such organization.
   */
  readonly setBilling: (organizationId: string, enabled: boolean) => Effect.Effect<Option.Option<boolean>, DatabaseUnavailable>
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return CreditStore.of({
    hold,
    captureSql,
    usageTransaction,
    open: (organizationId) =>
      orUnavailable(
        sql`INSERT INTO credit_accounts (organization_id) VALUES (${organizationId}) ON CONFLICT DO NOTHING`.pipe(Effect.asVoid)
      ),
    credit: (input) =>
      orUnavailable(Effect.map(
        sql<{ credited: boolean }>`WITH txn AS (
            INSERT INTO credit_transactions (organization_id, id, kind, amount_micros, description, external_ref)
            VALUES (${input.organizationId}, ${input.id}, ${input.kind}, ${input.amountMicros}, ${input.description},
              ${input.externalRef ?? null})
            ON CONFLICT DO NOTHING
            RETURNING amount_micros),
          account AS (
            INSERT INTO credit_accounts (organization_id, balance_micros)
            SELECT ${input.organizationId}, amount_micros FROM txn
            ON CONFLICT (organization_id) DO UPDATE
              SET balance_micros = credit_accounts.balance_micros + excluded.balance_micros
            RETURNING balance_micros)
          SELECT EXISTS (SELECT 1 FROM account) AS credited`,
        (rows) => rows[0]?.credited === true
      )),
    balances: (organizationIds) =>
      orUnavailable(sql<{ organization_id: string; balance_micros: number; reserved_micros: number }>`
        SELECT a.organization_id, a.balance_micros,
          COALESCE((SELECT sum(hold_micros) FROM runs r
            WHERE r.organization_id = a.organization_id AND r.held AND r.hold_credit), 0)::bigint AS reserved_micros
        FROM credit_accounts a WHERE a.organization_id = ANY(${organizationIds}::text[])`),
    transactions: (organizationId, limit) =>
      orUnavailable(sql<{ id: string; kind: TransactionKind; amount_micros: number; description: string; created_at: Date }>`
        SELECT id, kind, amount_micros, description, created_at FROM credit_transactions
        WHERE organization_id = ${organizationId} ORDER BY created_at DESC, id DESC LIMIT ${limit}`),
    setBilling: (organizationId, enabled) =>
      transactionOrUnavailable(sql, Effect.gen(function*() {
        yield* sql`SELECT 1 FROM credit_accounts WHERE organization_id = ${organizationId} FOR UPDATE`
        const rows = yield* sql<{ billing_enabled: boolean }>`UPDATE organizations SET billing_enabled = ${enabled}
          WHERE id = ${organizationId} RETURNING billing_enabled`
        yield* sql.unsafe(revokeLeases.text, [organizationId])
        return Option.map(Option.fromNullishOr(rows[0]), (row) => row.billing_enabled)
      }))
  })
})

/** Prepaid credit accounts. */
export class CreditStore extends Context.Service<CreditStore, CreditStoreService>()("CreditStore") {
  static readonly layer = Layer.effect(CreditStore, make)
}
