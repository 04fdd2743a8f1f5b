/**
 * Prepaid credit: one account per organization (`credit_accounts`: balance and the holds of runs in flight) and its
 * transactions (`credit_transactions`, whose amounts always sum to the balance). The account row is also the
 * organization's lock: admission and settlement (the database functions `arbiter_admit` and `arbiter_settle`) take it
 * before they read or change holds, so concurrent processes never admit more than the credit and quota allowed; they
 * hold, capture and release there. This module opens accounts, adds credit and reads balances and transactions.
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer } from "effect"

/** What a credit transaction records. */
export type TransactionKind = "signup_credit" | "purchase" | "auto_recharge" | "grant" | "usage" | "refund"

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  return {
    /** Opens the account of a new organization (inside its creation transaction). */
    open: (organizationId: string) =>
      sql`INSERT INTO credit_accounts (organization_id) VALUES (${organizationId}) ON CONFLICT DO NOTHING`.pipe(Effect.asVoid),
    /**
     * Adds credit with its transaction, in one statement (`kind` grant, signup_credit, purchase, auto_recharge or
     * refund). An `externalRef` already recorded adds nothing and returns false: each purchase is credited once.
     */
    credit: (input: {
      readonly organizationId: string
      readonly id: string
      readonly kind: Exclude<TransactionKind, "usage">
      readonly amountMicros: number
      readonly description: string
      readonly externalRef?: string | undefined
    }) =>
      Effect.map(
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
      ),
    /** Balances and holds of organizations. */
    balances: (organizationIds: ReadonlyArray<string>) =>
      sql<{ organization_id: string; balance_micros: number; reserved_micros: number }>`
        SELECT organization_id, balance_micros, reserved_micros FROM credit_accounts
        WHERE organization_id = ANY(${organizationIds}::text[])`,
    /** The organization's latest transactions, newest first. */
    transactions: (organizationId: string, limit: number) =>
      sql<{ id: string; kind: TransactionKind; amount_micros: number; description: string; created_at: Date }>`
        SELECT id, kind, amount_micros, description, created_at FROM credit_transactions
        WHERE organization_id = ${organizationId} ORDER BY created_at DESC, id DESC LIMIT ${limit}`
  }
})

/** Prepaid credit accounts. */
export class CreditStore extends Context.Tag("CreditStore")<CreditStore, Effect.Effect.Success<typeof make>>() {
  /** The store over the SQL client. */
  static readonly layer = Layer.effect(CreditStore, make)
}
