/**
 * The billing tables (only this module writes them): `billing_settings` (saved payment method, auto-recharge
 * settings and the recharge in progress), `checkouts`, `processor_events` and `signup_credits`. Claims are single
 * conditional statements, so two processes can never both win one: a checkout is paid once, an event handled once,
 * an e-mail address credited once, and one recharge runs at a time per organization.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer, Option } from "effect"

/** An organization's billing settings. */
export interface SettingsRow {
  readonly processor_customer_id: string | null
  readonly payment_method_id: string | null
  readonly payment_method_brand: string | null
  readonly payment_method_last4: string | null
  readonly auto_recharge_enabled: boolean
  readonly auto_recharge_threshold_micros: number
  readonly auto_recharge_amount_micros: number
  readonly recharge_failed_at: Date | null
  readonly recharge_failure_reason: string | null
  readonly recharge_retry_after: Date | null
}

/** A checkout. */
export interface CheckoutRow {
  readonly id: string
  readonly organization_id: string
  readonly amount_micros: number
  readonly processor: string
  readonly processor_ref: string | null
  readonly url: string | null
  readonly state: "open" | "paid"
  readonly expires_at: Date
  readonly created_at: Date
  readonly paid_at: Date | null
}

/** A recharge this process may make: its id is the processor's idempotency key. */
export interface RechargeClaim {
  readonly recharge_id: string
  readonly amount_micros: number
  readonly customer_id: string
  readonly payment_method_id: string
}

const Defaults: SettingsRow = {
  processor_customer_id: null,
  payment_method_id: null,
  payment_method_brand: null,
  payment_method_last4: null,
  auto_recharge_enabled: false,
  auto_recharge_threshold_micros: 0,
  auto_recharge_amount_micros: 5_000_000,
  recharge_failed_at: null,
  recharge_failure_reason: null,
  recharge_retry_after: null
}

const settingsColumns = `processor_customer_id, payment_method_id, payment_method_brand, payment_method_last4,
  auto_recharge_enabled, auto_recharge_threshold_micros, auto_recharge_amount_micros, recharge_failed_at,
  recharge_failure_reason, recharge_retry_after`

/** A saved payment method. */
export interface SavedPaymentMethod {
  readonly id: string
  readonly brand: string | null
  readonly last4: string | null
}

/** A checkout to store. */
export interface NewCheckout {
  readonly id: string
  readonly organizationId: string
  readonly amountMicros: number
  readonly processor: string
  readonly expiresAt: Date
}

/** The auto-recharge settings to save. */
export interface AutoRechargeInput {
  readonly enabled: boolean
  readonly thresholdMicros: number
  readonly amountMicros: number
}

/** The repository's operations (failures are the SQL client's; the services map them). */
export interface BillingRepoService {
  /** The settings of an organization (defaults when none were saved). */
  readonly settings: (organizationId: string) => Effect.Effect<SettingsRow, SqlError>
  /** Saves the auto-recharge settings; returns them. */
  readonly setAutoRecharge: (organizationId: string, input: AutoRechargeInput) => Effect.Effect<SettingsRow, SqlError>
  /** Remembers the processor's customer and, when given, the saved payment method. */
  readonly saveCustomer: (
    organizationId: string,
    customerId: string | null,
    method: SavedPaymentMethod | null
  ) => Effect.Effect<void, SqlError>
  /** Stores a new open checkout. */
  readonly insertCheckout: (checkout: NewCheckout) => Effect.Effect<void, SqlError>
  /** Records where the processor serves a checkout. */
  readonly setCheckoutSession: (id: string, processorRef: string, url: string) => Effect.Effect<void, SqlError>
  /** A checkout by id. */
  readonly checkout: (id: string) => Effect.Effect<Option.Option<CheckoutRow>, SqlError>
  /** Marks an open checkout paid; none when it was paid already (or does not exist). */
  readonly markPaid: (id: string) => Effect.Effect<Option.Option<CheckoutRow>, SqlError>
  /** Records a processor event; false when it was recorded before (a replayed delivery). */
  readonly recordEvent: (id: string, kind: string) => Effect.Effect<boolean, SqlError>
  /** Re-arms auto-recharge once credit arriving by other means lifts the balance to the threshold. */
  readonly rearm: (organizationId: string) => Effect.Effect<void, SqlError>
  /** Claims the sign-up credit of a normalized e-mail address for an organization; false when it was claimed. */
  readonly claimSignup: (emailNormalized: string, organizationId: string) => Effect.Effect<boolean, SqlError>
  /**
   * Claims the organization's next recharge: only with billing and auto-recharge on, a saved payment method, the
   * balance under the threshold, no recharge in progress (or one older than `staleSeconds`, whose id is reused so
   * the processor replays it instead of charging twice) and no cool-down running.
   */
  readonly claimRecharge: (
    organizationId: string,
    newId: string,
    staleSeconds: number
  ) => Effect.Effect<Option.Option<RechargeClaim>, SqlError>
  /** Ends a recharge: a success clears any failure; a failure is recorded with its cool-down. */
  readonly finishRecharge: (
    organizationId: string,
    rechargeId: string,
    failure: { readonly reason: string; readonly coolDownSeconds: number } | null
  ) => Effect.Effect<void, SqlError>
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const settings = sql.literal(settingsColumns)
  const ensure = (organizationId: string) =>
    sql`INSERT INTO billing_settings (organization_id) VALUES (${organizationId}) ON CONFLICT DO NOTHING`
  return BillingRepo.of({
    settings: (organizationId) =>
      Effect.map(
        sql<SettingsRow>`SELECT ${settings} FROM billing_settings WHERE organization_id = ${organizationId}`,
        (rows) => rows[0] ?? Defaults
      ),
    setAutoRecharge: (organizationId, input) =>
      Effect.map(
        sql<SettingsRow>`INSERT INTO billing_settings (organization_id, auto_recharge_enabled,
            auto_recharge_threshold_micros, auto_recharge_amount_micros)
          VALUES (${organizationId}, ${input.enabled}, ${input.thresholdMicros}, ${input.amountMicros})
          ON CONFLICT (organization_id) DO UPDATE SET auto_recharge_enabled = excluded.auto_recharge_enabled,
            auto_recharge_threshold_micros = excluded.auto_recharge_threshold_micros,
            auto_recharge_amount_micros = excluded.auto_recharge_amount_micros,
            recharge_retry_after = NULL, recharge_armed = true
          RETURNING ${settings}`,
        (rows) => rows[0]!
      ),
    saveCustomer: (organizationId, customerId, method) =>
      Effect.zipRight(
        ensure(organizationId),
        sql`UPDATE billing_settings
          SET processor_customer_id = COALESCE(${customerId}, processor_customer_id),
              payment_method_id = COALESCE(${method?.id ?? null}, payment_method_id),
              payment_method_brand = CASE WHEN ${method?.id ?? null}::text IS NULL THEN payment_method_brand ELSE ${method?.brand ?? null} END,
              payment_method_last4 = CASE WHEN ${method?.id ?? null}::text IS NULL THEN payment_method_last4 ELSE ${method?.last4 ?? null} END
          WHERE organization_id = ${organizationId}`
      ).pipe(Effect.asVoid),
    insertCheckout: (checkout) =>
      sql`INSERT INTO checkouts (id, organization_id, amount_micros, processor, state, expires_at)
        VALUES (${checkout.id}, ${checkout.organizationId}, ${checkout.amountMicros}, ${checkout.processor}, 'open',
          ${checkout.expiresAt})`.pipe(Effect.asVoid),
    setCheckoutSession: (id, processorRef, url) =>
      sql`UPDATE checkouts SET processor_ref = ${processorRef}, url = ${url} WHERE id = ${id}`.pipe(Effect.asVoid),
    checkout: (id) =>
      Effect.map(
        sql<CheckoutRow>`SELECT id, organization_id, amount_micros, processor, processor_ref, url, state, expires_at,
          created_at, paid_at FROM checkouts WHERE id = ${id}`,
        (rows) => Option.fromNullable(rows[0])
      ),
    markPaid: (id) =>
      Effect.map(
        sql<CheckoutRow>`UPDATE checkouts SET state = 'paid', paid_at = now() WHERE id = ${id} AND state = 'open'
          RETURNING id, organization_id, amount_micros, processor, processor_ref, url, state, expires_at, created_at, paid_at`,
        (rows) => Option.fromNullable(rows[0])
      ),
    recordEvent: (id, kind) =>
      Effect.map(
        sql<{ id: string }>`INSERT INTO processor_events (id, kind) VALUES (${id}, ${kind}) ON CONFLICT DO NOTHING RETURNING id`,
        (rows) => rows.length > 0
      ),
    rearm: (organizationId) =>
      sql`UPDATE billing_settings AS s SET recharge_armed = true FROM credit_accounts a
        WHERE s.organization_id = ${organizationId} AND a.organization_id = s.organization_id
          AND NOT s.recharge_armed AND a.balance_micros >= s.auto_recharge_threshold_micros`.pipe(Effect.asVoid),
    claimSignup: (emailNormalized, organizationId) =>
      Effect.map(
        sql<{ email_normalized: string }>`INSERT INTO signup_credits (email_normalized, organization_id)
          VALUES (${emailNormalized}, ${organizationId}) ON CONFLICT DO NOTHING RETURNING email_normalized`,
        (rows) => rows.length > 0
      ),
    claimRecharge: (organizationId, newId, staleSeconds) =>
      Effect.map(
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
        (rows) => Option.fromNullable(rows[0])
      ),
    finishRecharge: (organizationId, rechargeId, failure) =>
      (failure === null
        ? sql`UPDATE billing_settings AS s SET recharge_id = NULL, recharge_started_at = NULL, recharge_failed_at = NULL,
            recharge_failure_reason = NULL, recharge_retry_after = NULL,
            recharge_armed = a.balance_micros >= s.auto_recharge_threshold_micros
          FROM credit_accounts a
          WHERE s.organization_id = ${organizationId} AND a.organization_id = s.organization_id
            AND s.recharge_id = ${rechargeId}`
        : sql`UPDATE billing_settings SET recharge_id = NULL, recharge_started_at = NULL, recharge_failed_at = now(),
            recharge_failure_reason = ${failure.reason},
            recharge_retry_after = now() + make_interval(secs => ${failure.coolDownSeconds})
          WHERE organization_id = ${organizationId} AND recharge_id = ${rechargeId}`).pipe(Effect.asVoid)
  })
})

/** Storage of billing settings, checkouts, processor events and sign-up credits. */
export class BillingRepo extends Context.Tag("BillingRepo")<BillingRepo, BillingRepoService>() {
  /** The repository over the SQL client. */
  static readonly layer = Layer.effect(BillingRepo, make)
}
