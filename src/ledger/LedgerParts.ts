/**
 * What the run ledger's parts share: the requests and outcomes of admission and settlement (RunLedger.ts re-exports
 * them), what follows a settlement (`AfterSettlement`), and the pieces one process's ledger is made of
 * (`LedgerParts`), which admission (AdmissionFlow.ts) and settlement (RunLedger.ts) are composed over.
 */
import { Context, Effect, type Fiber, Layer } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import type { DatabaseUnavailable, DeadlineExceeded } from "../../schema/Errors.js"
import type { PgPools } from "../db/PgPool.js"
import type { PendingRun } from "./Admission.js"
import type { Batcher } from "./Batcher.js"
import type { CreditStoreService } from "./CreditStore.js"
import type { Escrow, Reservation } from "./Escrow.js"
import type { FastOutcome, FastRequest } from "./FastAdmission.js"
import type { LedgerHolder } from "./Holder.js"
import type { RecentKeys } from "./KeyAccounts.js"
import type { QuotaLedgerService } from "./QuotaLedger.js"
import type { Refusal } from "./Refusals.js"
import type { RunRow } from "./RunRecord.js"
import type { RunEnd } from "./Settlement.js"
import type { makeSettlementQueue } from "./SettlementQueue.js"

/** A run asking to be admitted: the pending run it becomes, less what admission gives it, with its deadline. */
export interface AdmissionRequest extends Omit<PendingRun, "id" | "period" | "createdAt" | "deadlineAt" | "holder"> {
  /** When the run's deadline passes (epoch milliseconds). */
  readonly deadline: number
}

/** An admitted run, stored `pending` with its holds: what settling it needs. */
export interface AdmittedRun {
  readonly pending: PendingRun
  readonly holdCredit: boolean
  readonly reservation: Reservation | undefined
}

export type AdmissionOutcome =
  | { readonly _tag: "Admitted"; readonly run: AdmittedRun }
  | { readonly _tag: "Replayed"; readonly run: RunRow }

/** Why admission refused a run: the contract's refusals (Refusals.ts), its deadline, or the database away. */
export type AdmissionError = Refusal | DeadlineExceeded | DatabaseUnavailable

/** The account after a settlement, for what follows it (auto-recharge). */
export interface SettlementResult {
  readonly balanceMicros: number | null
  /** The balance is under the organization's auto-recharge threshold and a recharge may run. */
  readonly rechargeDue: boolean
  /** The time recorded as the run's `settled_at` (when it left `pending`). */
  readonly settledAt: Date
  /** The end stored: the caller's, or the failure it yielded to at its deadline. */
  readonly end: RunEnd
  /** PostgreSQL refused the caller's end: the run was stored failed, without its output, its calls billed. */
  readonly refused: boolean
}

/** What runs after each settlement that moved money (auto-recharge); a declared dependency of the ledger. */
export class AfterSettlement extends Context.Service<
  AfterSettlement,
  (organizationId: string, result: SettlementResult) => Effect.Effect<void>
>()("AfterSettlement") {
  /** Nothing after settlements (the operator CLI, tests of the ledger alone). */
  static readonly none = Layer.succeed(AfterSettlement, () => Effect.void)
}

/** What the ledger's operations share in one process. */
export interface LedgerParts {
  /** The quota ledger, whose rule admission applies and whose counters settlement commits to. */
  readonly quota: QuotaLedgerService
  /** The credit store, whose rule admission applies and whose balance settlement captures from. */
  readonly credit: CreditStoreService
  readonly pools: PgPools["Service"]
  readonly holder: LedgerHolder["Service"]
  readonly after: AfterSettlement["Service"]
  /** Runs an effect in a fiber of the ledger's own (its services), in the background: nothing interrupts it. */
  readonly fork: <A, E>(effect: Effect.Effect<A, E>) => Fiber.Fiber<A, E>
  readonly escrow: Escrow
  readonly limitedKeys: RecentKeys
  readonly queue: ReturnType<typeof makeSettlementQueue>
  readonly fastBatcher: Batcher<FastRequest, FastOutcome, SqlError>
  /** The fast way for runs of keys known to have limits: each batch under those keys' locks (Admission.ts). */
  readonly keyedBatcher: Batcher<FastRequest, FastOutcome, SqlError>
}
