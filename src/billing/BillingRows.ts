/**
 * The rows and inputs of billing's storage (BillingRepo.ts): settings, checkouts, recharge claims, an organization's
 * account and its credit transactions as billing reads them.
 */
import type { CreditStoreService, TransactionKind } from "../ledger/CreditStore.js"

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

/** The settings of an organization that saved none. */
export const Defaults: SettingsRow = {
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

/** The columns of `SettingsRow`. */
export const settingsColumns = `processor_customer_id, payment_method_id, payment_method_brand, payment_method_last4,
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

/** An organization's account as billing shows it. */
export interface AccountRow {
  readonly billing_enabled: boolean
  readonly balance_micros: number
  readonly reserved_micros: number
}

/** A credit transaction as billing shows it. */
export interface TransactionRow {
  readonly id: string
  readonly kind: TransactionKind
  readonly amount_micros: number
  readonly description: string
  readonly created_at: Date
}

/** Credit to add, with its transaction (see `CreditStore.credit`). */
export type CreditInput = Parameters<CreditStoreService["credit"]>[0]
