/**
 * Billing's storage (only this module writes the billing tables): `billing_settings` (saved payment method,
 * auto-recharge settings and the recharge in progress), `checkouts`, `processor_events` and `signup_credits`, with
 * the reads billing makes of the organization (its account, its owner's address) and the credit store as billing
 * uses it. Claims are single conditional statements, so two processes can never both win one: a checkout is paid
 * once, an event handled once, an e-mail address credited once, and one recharge runs at a time per organization.
 * Database failures are mapped here, once (db/Unavailable.ts): the operations fail with `DatabaseUnavailable` only.
 */
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import type { DatabaseUnavailable } from "../../schema/Errors.js"
import { orUnavailable, transactionOrUnavailable } from "../db/Unavailable.js"
import { CreditStore, type CreditStoreService } from "../ledger/CreditStore.js"
import {
  type AccountRow,
  type AutoRechargeInput,
  type CheckoutRow,
  type CreditInput,
  Defaults,
  type NewCheckout,
  type RechargeClaim,
  type SavedPaymentMethod,
  settingsColumns,
  type SettingsRow,
  type TransactionRow
} from "./BillingRows.js"

/** The repository's operations; a database failure is `DatabaseUnavailable` (a refused statement, a defect). */
export interface BillingRepoService {
  /** The settings of an organization (defaults when none were saved). */
  readonly settings: (organizationId: string) => Effect.Effect<SettingsRow, DatabaseUnavailable>
  /** Saves the auto-recharge settings; returns them. */
  readonly setAutoRecharge: (organizationId: string, input: AutoRechargeInput) => Effect.Effect<SettingsRow, DatabaseUnavailable>
  /** Remembers the processor's customer and, when given, the saved payment method. */
  readonly saveCustomer: (
    organizationId: string,
    customerId: string | null,
    method: SavedPaymentMethod | null
  ) => Effect.Effect<void, DatabaseUnavailable>
  /** Re-arms auto-recharge once credit arriving by other means lifts the balance to the threshold. */
  readonly rearm: (organizationId: string) => Effect.Effect<void, DatabaseUnavailable>
  /** Stores a new open checkout. */
  readonly insertCheckout: (checkout: NewCheckout) => Effect.Effect<void, DatabaseUnavailable>
  /** Records where the processor serves a checkout. */
  readonly setCheckoutSession: (id: string, processorRef: string, url: string) => Effect.Effect<void, DatabaseUnavailable>
  /** A checkout by id. */
  readonly checkout: (id: string) => Effect.Effect<Option.Option<CheckoutRow>, DatabaseUnavailable>
  /** Marks an open checkout paid; none when it was paid already (or does not exist). */
  readonly markPaid: (id: string) => Effect.Effect<Option.Option<CheckoutRow>, DatabaseUnavailable>
  /** Records a processor event; false when it was recorded before (a replayed delivery). */
  readonly recordEvent: (id: string, kind: string) => Effect.Effect<boolean, DatabaseUnavailable>
  /** Claims the sign-up credit of a normalized e-mail address for an organization; false when it was claimed. */
  readonly claimSignup: (emailNormalized: string, organizationId: string) => Effect.Effect<boolean, DatabaseUnavailable>
  /**
   * Claims the organization's next recharge: only with billing and auto-recharge on, a saved payment method, the
   * balance under the threshold, no recharge in progress (or one older than `staleSeconds`, whose id is reused so
   * the processor replays it instead of charging twice) and no cool-down running.
   */
  readonly claimRecharge: (
    organizationId: string,
    newId: string,
    staleSeconds: number
  ) => Effect.Effect<Option.Option<RechargeClaim>, DatabaseUnavailable>
  /** Ends a recharge: a success clears any failure; a failure is recorded with its cool-down. */
  readonly finishRecharge: (
    organizationId: string,
    rechargeId: string,
    failure: { readonly reason: string; readonly coolDownSeconds: number } | null
  ) => Effect.Effect<void, DatabaseUnavailable>
  /** Whether billing is on, the balance and the credit held by runs in flight; none for an unknown organization. */
  readonly account: (organizationId: string) => Effect.Effect<AccountRow | undefined, DatabaseUnavailable>
  /** The e-mail address of the organization's first owner, if it has one. */
  readonly ownerEmail: (organizationId: string) => Effect.Effect<string | null, DatabaseUnavailable>
  /** Adds credit once per external reference (`CreditStore.credit`); false when it was added before. */
  readonly credit: (input: CreditInput) => Effect.Effect<boolean, DatabaseUnavailable>
  /** The organization's latest credit transactions, newest first. */
  readonly transactions: (organizationId: string, limit: number) => Effect.Effect<ReadonlyArray<TransactionRow>, DatabaseUnavailable>
  /**
   * Runs `effect` in one transaction (the operations above called inside it join it), with database failures,
   * the commit's included, mapped at the transaction's edge.
   */
  readonly transaction: <A, E, R>(
    effect: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, Exclude<E, SqlError.SqlError> | DatabaseUnavailable, R>
}

type Sql = SqlClient.SqlClient

const settingsOperations = (sql: Sql): Pick<BillingRepoService, "settings" | "setAutoRecharge" | "saveCustomer" | "rearm"> => {
  const columns = sql.literal(settingsColumns)
  const ensure = (organizationId: string) =>
    sql`INSERT INTO billing_settings (organization_id) VALUES (${organizationId}) ON CONFLICT DO NOTHING`
  return {
    settings: (organizationId) =>
      orUnavailable(Effect.map(
        sql<SettingsRow>`SELECT ${columns} FROM billing_settings WHERE organization_id = ${organizationId}`,
        (rows) => rows[0] ?? Defaults
      )),
    setAutoRecharge: (organizationId, input) =>
      orUnavailable(Effect.map(
        sql<SettingsRow>`INSERT INTO billing_settings (organization_id, auto_recharge_enabled,
            auto_recharge_threshold_micros, auto_recharge_amount_micros)
          VALUES (${organizationId}, ${input.enabled}, ${input.thresholdMicros}, ${input.amountMicros})
          ON CONFLICT (organization_id) DO UPDATE SET auto_recharge_enabled = excluded.auto_recharge_enabled,
            auto_recharge_threshold_micros = excluded.auto_recharge_threshold_micros,
            auto_recharge_amount_micros = excluded.auto_recharge_amount_micros,
            recharge_retry_after = NULL, recharge_armed = true
          RETURNING ${columns}`,
        (rows) => rows[0]!
      )),
    saveCustomer: (organizationId, customerId, method) =>
      orUnavailable(Effect.andThen(
        ensure(organizationId),
        sql`UPDATE billing_settings
          SET processor_customer_id = COALESCE(${customerId}, processor_customer_id),
              payment_method_id = COALESCE(${method?.id ?? null}, payment_method_id),
              payment_method_brand = CASE WHEN ${method?.id ?? null}::text IS NULL THEN payment_method_brand ELSE ${method?.brand ?? null} END,
              payment_method_last4 = CASE WHEN ${method?.id ?? null}::text IS NULL THEN payment_method_last4 ELSE ${method?.last4 ?? null} END
          WHERE organization_id = ${organizationId}`
      )).pipe(Effect.asVoid),
    rearm: (organizationId) =>
      orUnavailable(sql`UPDATE billing_settings AS s SET recharge_armed = true FROM credit_accounts a
        WHERE s.organization_id = ${organizationId} AND a.organization_id = s.organization_id
          AND NOT s.recharge_armed AND a.balance_micros >= s.auto_recharge_threshold_micros`).pipe(Effect.asVoid)
  }
}

const checkoutOperations = (
  sql: Sql
): Pick<BillingRepoService, "insertCheckout" | "setCheckoutSession" | "checkout" | "markPaid" | "recordEvent"> => ({
  insertCheckout: (checkout) =>
    orUnavailable(sql`INSERT INTO checkouts (id, organization_id, amount_micros, processor, state, expires_at)
      VALUES (${checkout.id}, ${checkout.organizationId}, ${checkout.amountMicros}, ${checkout.processor}, 'open',
        ${checkout.expiresAt})`).pipe(Effect.asVoid),
  setCheckoutSession: (id, processorRef, url) =>
    orUnavailable(sql`UPDATE checkouts SET processor_ref = ${processorRef}, url = ${url} WHERE id = ${id}`).pipe(Effect.asVoid),
  checkout: (id) =>
    orUnavailable(Effect.map(
      sql<CheckoutRow>`SELECT id, organization_id, amount_micros, processor, processor_ref, url, state, expires_at,
        created_at, paid_at FROM checkouts WHERE id = ${id}`,
      (rows) => Option.fromNullishOr(rows[0])
    )),
  markPaid: (id) =>
    orUnavailable(Effect.map(
      sql<CheckoutRow>`UPDATE checkouts SET state = 'paid', paid_at = now() WHERE id = ${id} AND state = 'open'
        RETURNING id, organization_id, amount_micros, processor, processor_ref, url, state, expires_at, created_at, paid_at`,
      (rows) => Option.fromNullishOr(rows[0])
    )),
  recordEvent: (id, kind) =>
    orUnavailable(Effect.map(
      sql<{ id: string }>`INSERT INTO processor_events (id, kind) VALUES (${id}, ${kind}) ON CONFLICT DO NOTHING RETURNING id`,
      (rows) => rows.length > 0
    ))
})

const rechargeOperations = (sql: Sql): Pick<BillingRepoService, "claimRecharge" | "finishRecharge"> => ({
  claimRecharge: (organizationId, newId, staleSeconds) =>
    orUnavailable(Effect.map(
      sql<RechargeClaim>`UPDATE billing_settings AS s
        SET recharge_id = CASE WHEN s.recharge_id IS NULL THEN ${newId} ELSE s.recharge_id END,
            recharge_started_at = now()
        FROM credit_accounts a, organizations o
        WHERE s.organization_id = ${organizationId} AND a.organization_id = s.organization_id
          AND o.id = s.organization_id AND o.billing_enabled AND s.auto_recharge_enabled AND s.recharge_armed
          AND s.payment_method_id IS NOT NULL AND s.processor_customer_id IS NOT NULL
          AND a.balance_micros < s.auto_recharge_threshold_micros
          AND (s.recharge_started_at IS NULL OR s.recharge_started_at < now() - make_interval(secs => ${staleSeconds}))
          AND (s.recharge_retry_after IS NULL OR s.recharge_retry_after < now())
        RETURNING s.recharge_id, s.auto_recharge_amount_micros AS amount_micros,
          s.processor_customer_id AS customer_id, s.payment_method_id`,
      (rows) => Option.fromNullishOr(rows[0])
    )),
  finishRecharge: (organizationId, rechargeId, failure) =>
    orUnavailable(
      failure === null
        ? sql`UPDATE billing_settings AS s SET recharge_id = NULL, recharge_started_at = NULL, recharge_failed_at = NULL,
            recharge_failure_reason = NULL, recharge_retry_after = NULL,
            recharge_armed = a.balance_micros >= s.auto_recharge_threshold_micros
          FROM credit_accounts a
          WHERE s.organization_id = ${organizationId} AND a.organization_id = s.organization_id
            AND s.recharge_id = ${rechargeId}`
        : sql`UPDATE billing_settings SET recharge_id = NULL, recharge_started_at = NULL, recharge_failed_at = now(),
            recharge_failure_reason = ${failure.reason},
            recharge_retry_after = now() + make_interval(secs => ${failure.coolDownSeconds})
          WHERE organization_id = ${organizationId} AND recharge_id = ${rechargeId}`
    ).pipe(Effect.asVoid)
})

const accountOperations = (
  sql: Sql,
  credit: CreditStoreService
): Pick<BillingRepoService, "account" | "ownerEmail" | "claimSignup" | "credit" | "transactions"> => ({
  account: (organizationId) =>
    orUnavailable(Effect.map(
      sql<AccountRow>`
        SELECT o.billing_enabled, COALESCE(a.balance_micros, 0) AS balance_micros,
          COALESCE((SELECT sum(hold_micros) FROM runs r WHERE r.organization_id = o.id AND r.held AND r.hold_credit),
            0)::bigint AS reserved_micros
        FROM organizations o LEFT JOIN credit_accounts a ON a.organization_id = o.id WHERE o.id = ${organizationId}`,
      (rows) => rows[0]
    )),
  ownerEmail: (organizationId) =>
    orUnavailable(Effect.map(
      sql<{ email: string }>`SELECT email FROM members WHERE organization_id = ${organizationId} AND role = 'owner'
        ORDER BY created_at LIMIT 1`,
      (rows) => rows[0]?.email ?? null
    )),
  claimSignup: (emailNormalized, organizationId) =>
    orUnavailable(Effect.map(
      sql<{ email_normalized: string }>`INSERT INTO signup_credits (email_normalized, organization_id)
        VALUES (${emailNormalized}, ${organizationId}) ON CONFLICT DO NOTHING RETURNING email_normalized`,
      (rows) => rows.length > 0
    )),
  credit: (input) => orUnavailable(credit.credit(input)),
  transactions: (organizationId, limit) => orUnavailable(credit.transactions(organizationId, limit))
})

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const credit = yield* CreditStore
  return BillingRepo.of({
    ...settingsOperations(sql),
    ...checkoutOperations(sql),
    ...rechargeOperations(sql),
    ...accountOperations(sql, credit),
    transaction: (effect) => transactionOrUnavailable(sql, effect)
  })
})

/** Billing's storage. */
export class BillingRepo extends Context.Service<BillingRepo, BillingRepoService>()("BillingRepo") {
  /** The repository over the SQL client and the credit store. */
  static readonly layer = Layer.effect(BillingRepo, make).pipe(Layer.provide(CreditStore.layer))
}
