/**
 * Admission's fast way: runs whose holds this process's slices covered (Escrow) are stored `pending` in one statement
 * per batch, with an asynchronous commit, which also adds their holds to their leases only if each lease still covers
 * them (another process may have reclaimed it) and finds the idempotency keys already used, so a key owning a run is
 * answered without being charged; runs of keys with limits join keyed batches, which lock their keys first and check
 * each run against its key. A run the batch could not store goes the exact way (Admission.ts).
 */
import type { SqlError } from "effect/sql/SqlError"
import { Effect } from "effect"
import type pg from "pg"
import { existingStatement, type PendingRun } from "./Admission.js"
import type { LeaseRow, Reservation } from "./Escrow.js"
import { keyPositionSql } from "./KeyAccounts.js"
import { query, type Statement, transaction } from "../db/LedgerSql.js"
import { runColumns, type RunRow, runRowOfJson } from "./RunRecord.js"

/** What the fast way did with one run of a batch. */
export type FastOutcome =
  | { readonly _tag: "Stored" }
  | { readonly _tag: "KeyUsed"; readonly existing: RunRow }
  | { readonly _tag: "LeaseShort" }
  | { readonly _tag: "Raced" }
  | { readonly _tag: "KeyLimited" }

const fastStatement: Statement = {
  name: "ledger_admit_fast",
  text: `WITH req AS (
      SELECT * FROM json_to_recordset($1::json) AS r(i int, id uuid, org text, origin text, key text, kind text,
        digest text, period date, hold_micros bigint, hold_tokens bigint, deadline_at timestamptz,
        created_at timestamptz, lease uuid, credit bigint, spend bigint, tokens bigint, key_id text)
    ),
    keys AS MATERIALIZED (
      SELECT k.key_id, (k.spend_limit_micros IS NOT NULL OR k.token_limit IS NOT NULL
          OR k.runs_per_minute IS NOT NULL) AS limited
      FROM key_accounts k WHERE k.key_id = ANY (ARRAY(SELECT key_id FROM req))
      ORDER BY k.key_id FOR KEY SHARE
    ),
    existing AS (
      SELECT r.i, row_to_json(x) AS run FROM req r
      CROSS JOIN LATERAL (
        SELECT ${runColumns} FROM runs
        WHERE runs.organization_id = r.org AND runs.origin = r.origin AND runs.idempotency_key = r.key
        LIMIT 1
      ) x
    ),
    candidates AS (
      SELECT * FROM req r WHERE i NOT IN (SELECT i FROM existing)
    ),
    key_position AS MATERIALIZED (
      SELECT ${keyPositionSql("$4::timestamptz")}
      WHERE k.key_id = ANY($3::text[])
    ),
    key_asks AS (
      SELECT c.i, p.key_id, p.bucket, p.spend_settled + p.spend_held + sum(c.hold_micros) OVER w AS spend,
        p.spend_limit, p.tokens_settled + p.tokens_held + sum(c.hold_tokens) OVER w AS tokens, p.token_limit,
        count(*) OVER w AS runs
      FROM candidates c JOIN key_position p ON p.key_id = c.key_id
      WINDOW w AS (PARTITION BY c.key_id ORDER BY c.i)
    ),
    key_fits AS (
      SELECT i, key_id FROM key_asks
      WHERE (spend_limit IS NULL OR spend <= spend_limit) AND (token_limit IS NULL OR tokens <= token_limit)
        AND (bucket IS NULL OR bucket >= runs)
    ),
    fresh AS (
      SELECT * FROM candidates r
      WHERE NOT EXISTS (SELECT 1 FROM keys k WHERE k.key_id = r.key_id AND k.limited)
        OR i IN (SELECT i FROM key_fits)
    ),
    need AS (
      SELECT lease, period, sum(credit) AS credit, sum(spend) AS spend, sum(tokens) AS tokens FROM fresh
      GROUP BY lease, period
    ),
    lease_locks AS MATERIALIZED (
      SELECT l.id FROM ledger_leases l WHERE l.id = ANY (ARRAY(SELECT lease FROM need)) ORDER BY l.id FOR NO KEY UPDATE
    ),
    leased AS (
      UPDATE ledger_leases l SET credit_held = l.credit_held + n.credit, spend_held = l.spend_held + n.spend,
        tokens_held = l.tokens_held + n.tokens, version = l.version + 1
      FROM need n JOIN lease_locks k ON k.id = n.lease
      WHERE l.id = n.lease AND l.period = n.period AND l.holder = $2 AND NOT l.revoked
        AND l.credit_held + n.credit <= l.credit_micros AND l.spend_held + n.spend <= l.spend_micros
        AND l.tokens_held + n.tokens <= l.tokens
      RETURNING l.id, l.organization_id, to_char(l.period, 'YYYY-MM-DD') AS period, l.billing, l.spend_limited,
        l.tokens_limited, l.revoked, l.credit_micros, l.spend_micros, l.tokens, l.version
    ),
    stored AS (
      INSERT INTO runs (id, organization_id, origin, idempotency_key, kind, state, input_digest, period, hold_micros,
        hold_tokens, hold_credit, held, deadline_at, created_at, holder, lease_id, key_id)
      SELECT f.id, f.org, f.origin, f.key, f.kind, 'pending', f.digest, f.period, f.hold_micros, f.hold_tokens,
        l.billing, true, f.deadline_at, f.created_at, $2, f.lease, f.key_id
      FROM fresh f JOIN leased l ON l.id = f.lease
      ON CONFLICT DO NOTHING
      RETURNING id, key_id
    ),
    bucket_taken AS (
      UPDATE key_accounts k SET bucket_tokens = p.bucket - t.runs, bucket_at = $4::timestamptz
      FROM key_position p JOIN (SELECT key_id, count(*) AS runs FROM stored GROUP BY key_id) t ON t.key_id = p.key_id
      WHERE k.key_id = p.key_id AND p.bucket IS NOT NULL
    )
    SELECT (SELECT json_agg(json_build_object('i', i, 'run', run)) FROM existing) AS existing,
      (SELECT json_agg(id) FROM stored) AS stored,
      (SELECT json_agg(leased) FROM leased) AS leases,
      (SELECT json_agg(key_id) FROM keys WHERE limited) AS limited`
}

const compensateStatement: Statement = {
  name: "ledger_admit_compensate",
  text: `UPDATE ledger_leases SET credit_held = credit_held - $2, spend_held = spend_held - $3,
      tokens_held = tokens_held - $4, version = version + 1 WHERE id = $1::uuid`
}

/** One run of a fast batch: the run and the reservation its slice gave it. */
export interface FastRequest {
  readonly run: PendingRun
  readonly reservation: Reservation
}

const lockKeys: Statement = {
  name: "ledger_admit_lock_keys",
  text: "SELECT key_id FROM key_accounts WHERE key_id = ANY($1::text[]) ORDER BY key_id FOR UPDATE"
}

interface FastRow {
  readonly existing: ReadonlyArray<{ i: number; run: Record<string, any> }> | null
  readonly stored: ReadonlyArray<string> | null
  readonly leases: ReadonlyArray<LeaseRow> | null
  readonly limited: ReadonlyArray<string> | null
}

/**
 * The fast statement on its own (no key with limits in the batch), or, for a batch of runs of keys with limits, in
 * a transaction that first locks those keys' rows in key order (each key's lock, as on the exact way): the
 * statement, taking a new snapshot after the locks, then reads every earlier admission of those keys committed and
 * checks each run against its key's limits, the runs of one key counted in batch order.
 */
const runFast = (pool: pg.Pool, values: ReadonlyArray<unknown>, limitedKeys: ReadonlyArray<string>) =>
  limitedKeys.length === 0
    ? query<FastRow>(pool, fastStatement, values)
    : transaction(pool, (client) =>
      Effect.andThen(query(client, lockKeys, [limitedKeys]), query<FastRow>(client, fastStatement, values)))

/**
 * Stores a batch of runs the slices covered, in one statement; returns each run's outcome (in batch order) and the
 * leases as they stand after it. Runs of keys with limits are stored only when `limitedKeys` names their key (see
 * `runFast`) and they fit its limits; the others come back `KeyLimited`, for the exact way.
 */
export const storeFast = (
  pool: pg.Pool,
  holder: string,
  batch: ReadonlyArray<FastRequest>,
  limitedKeys: ReadonlyArray<string> = []
): Effect.Effect<{ readonly outcomes: ReadonlyArray<FastOutcome>; readonly leases: ReadonlyArray<LeaseRow> }, SqlError> =>
  Effect.gen(function*() {
    const payload = JSON.stringify(batch.map(({ reservation, run }, i) => ({
      i,
      id: run.id,
      org: run.organizationId,
      origin: run.origin,
      key: run.idempotencyKey,
      kind: run.kind,
      digest: run.inputDigest,
      period: run.period,
      hold_micros: run.holdMicros,
      hold_tokens: run.holdTokens,
      deadline_at: run.deadlineAt.toISOString(),
      created_at: run.createdAt.toISOString(),
      lease: reservation.leaseId,
      credit: reservation.credit,
      spend: reservation.spend,
      tokens: reservation.tokens,
      key_id: run.keyId
    })))
    const keys = [...new Set(limitedKeys)].sort()
    const [row] = yield* runFast(pool, [payload, holder, keys, new Date().toISOString()], keys)
    const existing = new Map((row?.existing ?? []).map((entry) => [entry.i, runRowOfJson(entry.run)]))
    const stored = new Set(row?.stored ?? [])
    const leases = row?.leases ?? []
    const leased = new Set(leases.map((lease) => lease.id))
    const limited = new Set(row?.limited ?? [])
    const outcomes = batch.map(({ reservation, run }, i): FastOutcome => {
      const used = existing.get(i)
      if (used !== undefined) return { _tag: "KeyUsed", existing: used }
      if (stored.has(run.id)) return { _tag: "Stored" }
      if (run.keyId !== null && limited.has(run.keyId)) return { _tag: "KeyLimited" }
      return leased.has(reservation.leaseId) ? { _tag: "Raced" } : { _tag: "LeaseShort" }
    })
    return { outcomes, leases }
  })

/**
 * A run's key was taken between the batch's look-up and its insert (another process stored it at that moment): its
 * holds go back to the lease, and the run that owns the key is read.
 */
export const undoRaced = (pool: pg.Pool, request: FastRequest): Effect.Effect<RunRow | undefined, SqlError> =>
  Effect.gen(function*() {
    const { reservation, run } = request
    yield* query(pool, compensateStatement, [reservation.leaseId, reservation.credit, reservation.spend, reservation.tokens])
    const [existing] = yield* query<RunRow>(pool, existingStatement, [run.organizationId, run.origin, run.idempotencyKey])
    return existing
  })

