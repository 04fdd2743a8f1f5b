/**
 * Admission's exact way, for a run no slice covers (the fast way is FastAdmission.ts): under the organization's lock,
 * the contract's checks in its order (replay; quota, 429; the key's limits, 429; conflict, 409; credit, 402), taking
 * back every lease's unused parts before refusing, so a run is refused only when what is left cannot cover it. Both
 * ways store a run `pending` with its holds with an asynchronous commit (the run's settlement, a synchronous commit,
 * flushes it before any answer depends on it; docs/ledger.md). The quota and credit rules are the quota ledger's and
 * the credit store's (`AdmissionRules`).
 */
import type { SqlError } from "effect/sql/SqlError"
import { Effect } from "effect"
import type pg from "pg"
import type { CreditRefusal, CreditStoreService } from "./CreditStore.js"
import type { LeaseRow } from "./Escrow.js"
import {
  checkKey,
  type KeyPositionRow,
  type KeyRefusal,
  lockKeyPosition,
  takeFromBucket
} from "./KeyAccounts.js"
import { query, type Statement, transaction } from "../db/LedgerSql.js"
import { reclaimLeases } from "./Leases.js"
import { lockPositionAnd, type Position } from "./Position.js"
import type { QuotaLedgerService, QuotaRefusal } from "./QuotaLedger.js"
import { runColumns, type RunOrigin, type RunRow } from "./RunRecord.js"

/** A run to store `pending`: its identity, its input digest and what it holds. */
export interface PendingRun {
  readonly id: string
  readonly organizationId: string
  readonly origin: RunOrigin
  readonly idempotencyKey: string
  readonly kind: "decision" | "verdict"
  readonly inputDigest: string
  readonly period: string
  /** The spend ceiling it holds (spec, Limits). */
  readonly holdMicros: number
  readonly holdTokens: number
  readonly createdAt: Date
  readonly deadlineAt: Date
  readonly holder: string
  /** The API key asking (null for a console session): its own limits apply after the quota's (KeyAccounts.ts). */
  readonly keyId: string | null
}

export type ExactOutcome =
  | { readonly _tag: "Stored"; readonly holdCredit: boolean }
  | { readonly _tag: "Replayed"; readonly existing: RunRow }
  | { readonly _tag: "Conflict" }
  | { readonly _tag: "Quota"; readonly refusal: QuotaRefusal }
  | { readonly _tag: "Credit"; readonly refusal: CreditRefusal }
  | { readonly _tag: "Key"; readonly refusal: KeyRefusal }
  | { readonly _tag: "NoOrganization" }

/** The run that owns an idempotency key. */
export const existingStatement: Statement = {
  name: "ledger_run_by_key",
  text: `SELECT ${runColumns} FROM runs WHERE organization_id = $1 AND origin = $2 AND idempotency_key = $3`
}

const insertExact: Statement = {
  name: "ledger_admit_exact",
  text: `INSERT INTO runs (id, organization_id, origin, idempotency_key, kind, state, input_digest, period, hold_micros,
      hold_tokens, hold_credit, held, deadline_at, created_at, holder, key_id)
    VALUES ($1::uuid, $2, $3, $4, $5, 'pending', $6, $7::date, $8, $9, $10, true, $11, $12, $13, $14)
    ON CONFLICT DO NOTHING RETURNING id`
}

/** The rules admission applies under the organization's lock: the quota ledger's `reserve`, the credit store's `hold`. */
export interface AdmissionRules {
  readonly quota: Pick<QuotaLedgerService, "reserve">
  readonly credit: Pick<CreditStoreService, "hold">
}

interface ExactDecision {
  readonly outcome: ExactOutcome
  readonly reclaimed: ReadonlyArray<LeaseRow>
}

/** The run a key already owns, replayed when the body is the same: no check applies to a replay. */
const replayOf = (run: PendingRun, existing: RunRow | undefined): ExactOutcome | undefined =>
  existing !== undefined && existing.input_digest === run.inputDigest ? { _tag: "Replayed", existing } : undefined

/**
 * The contract's order of checks: a replay, the organization's quota, the key's limits, the key's conflict, credit.
 * `existing` is read again after leases are reclaimed, and may then be a run another process stored under the key
 * meanwhile (the fast way stores runs without the organization's lock): the same body replays it, never a conflict.
 */
const decide = (
  rules: AdmissionRules,
  position: Position,
  key: KeyPositionRow | undefined,
  run: PendingRun,
  existing: RunRow | undefined
): ExactOutcome | undefined => {
  const replay = replayOf(run, existing)
  if (replay !== undefined) return replay
  const ask = { micros: run.holdMicros, tokens: run.holdTokens }
  const quota = rules.quota.reserve(position, ask)
  if (quota !== undefined) return { _tag: "Quota", refusal: quota }
  const limit = key === undefined ? undefined : checkKey(key, ask)
  if (limit !== undefined) return { _tag: "Key", refusal: limit }
  if (existing !== undefined) return { _tag: "Conflict" }
  const credit = rules.credit.hold(position, run.holdMicros)
  if (credit !== undefined) return { _tag: "Credit", refusal: credit }
  return undefined
}

/**
 * Admits one run the exact way, in one transaction under the organization's lock: a key owning a run with the same
 * digest replays it; otherwise the quota, the key and the credit are checked in the contract's order, the unused
 * parts of every lease taken back once before a refusal, and the run is stored holding outside any lease.
 */
export const admitExact = (
  rules: AdmissionRules,
  pool: pg.Pool,
  run: PendingRun
): Effect.Effect<ExactDecision, SqlError> =>
  transaction(pool, (client) =>
    Effect.gen(function*() {
      const read = () =>
        Effect.map(
          lockPositionAnd(client, run.organizationId, run.period, [
            { statement: existingStatement, values: [run.organizationId, run.origin, run.idempotencyKey] }
          ]),
          ({ after, position }) => [position, after[0]![0] as RunRow | undefined] as const
        )
      let [position, existing] = yield* read()
      if (position === undefined) return { outcome: { _tag: "NoOrganization" }, reclaimed: [] } satisfies ExactDecision
      const replay = replayOf(run, existing)
      if (replay !== undefined) return { outcome: replay, reclaimed: [] } satisfies ExactDecision
      // The key's lock after the organization's (every path takes them in this order).
      const key = run.keyId === null ? undefined : yield* lockKeyPosition(client, run.keyId, run.createdAt)
      let refusal = decide(rules, position, key, run, existing)
      let reclaimed: ReadonlyArray<LeaseRow> = []
      // Unused slices can only change the organization's quota and credit, not the key's limits or the conflict.
      if (refusal !== undefined && (refusal._tag === "Quota" || refusal._tag === "Credit")) {
        reclaimed = yield* reclaimLeases(client, run.organizationId)
        if (reclaimed.length > 0) {
          ;[position, existing] = yield* read()
          refusal = decide(rules, position!, key, run, existing)
        }
      }
      if (refusal !== undefined) return { outcome: refusal, reclaimed }
      const holdCredit = position!.billing
      const stored = yield* query(client, insertExact, [
        run.id,
        run.organizationId,
        run.origin,
        run.idempotencyKey,
        run.kind,
        run.inputDigest,
        run.period,
        run.holdMicros,
        run.holdTokens,
        holdCredit,
        run.deadlineAt,
        run.createdAt,
        run.holder,
        run.keyId
      ])
      if (stored.length > 0) {
        if (key !== undefined) yield* takeFromBucket(client, key, run.createdAt)
        return { outcome: { _tag: "Stored", holdCredit }, reclaimed }
      }
      // Another process stored a run under the key since it was read (the insert waited for its commit).
      const [owner] = yield* query<RunRow>(client, existingStatement, [run.organizationId, run.origin, run.idempotencyKey])
      return { outcome: replayOf(run, owner) ?? { _tag: "Conflict" }, reclaimed }
    }))
