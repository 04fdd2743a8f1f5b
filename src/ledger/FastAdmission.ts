/**
 * Admission's fast way: runs whose holds this process's slices covered (Escrow) are stored `pending` in one statement
 * per batch, after the batch's locks and with an asynchronous commit. The statement stores the runs of each lease only
 * if the lease still covers them (another process may have reclaimed it), adds the holds of the runs it stored to
 * their leases, and reads the run owning each key its insert found used, so a key owning a run is answered without
 * being charged; runs of keys with limits join keyed batches, which lock their keys first and check each run against
 * its key. A run the batch could not store goes the exact way (Admission.ts).
 */
import type { SqlError } from "effect/sql/SqlError"
import { Effect } from "effect"
import type pg from "pg"
import { existingStatement, type PendingRun } from "./Admission.js"
import type { LeaseRow, Reservation } from "./Escrow.js"
import { keyPositionSql } from "./KeyAccounts.js"
import { query, type Statement, transaction } from "../db/LedgerSql.js"
import { inOneTransaction, stepsInTransaction } from "../db/OneRoundTrip.js"
import { runColumns, type RunRow, runRowOfJson } from "./RunRecord.js"

/** What the fast way did with one run of a batch. */
export type FastOutcome =
  | { readonly _tag: "Stored" }
  | { readonly _tag: "KeyUsed"; readonly existing: RunRow }
  | { readonly _tag: "LeaseShort" }
  | { readonly _tag: "Raced" }
  | { readonly _tag: "KeyLimited" }

/**
 * The batch's locks, before its statement: the rows of its runs' keys in share mode, in key order, then its leases, in
 * lease id order (keys before leases, as every path takes them). The leases' step waits for the keys' (its condition
 * reads them first), so the order holds whichever step PostgreSQL starts with. The statement after it starts with a
 * snapshot taken once every lock is held, so it reads and updates the leases as their last holder committed them:
 * none of its rows has changed since its snapshot, and PostgreSQL never re-evaluates it for a row updated meanwhile
 * (an EvalPlanQual recheck, which starts every node of the statement's plan again).
 */
const lockStatement: Statement = {
  name: "ledger_admit_lock",
  text: `WITH keys AS MATERIALIZED (
      SELECT key_id FROM key_accounts WHERE key_id = ANY($1::text[]) ORDER BY key_id FOR KEY SHARE
    ),
    leases AS MATERIALIZED (
      SELECT id FROM ledger_leases WHERE id = ANY($2::uuid[]) AND (SELECT count(*) FROM keys) >= 0
      ORDER BY id FOR NO KEY UPDATE
    )
    SELECT (SELECT count(*) FROM keys) AS keys, (SELECT count(*) FROM leases) AS leases`
}

// A run is stored when its lease covers the holds of the batch's runs of that lease; the insert's conflict on the
// idempotency key (the unique index, never a planner's choice of index) tells a key already used, and only such a
// run's owner is read. The lease then gains the holds of the runs stored, and only theirs.
const fastStatement: Statement = {
  name: "ledger_admit_fast",
  text: `WITH req AS (
      SELECT * FROM json_to_recordset($1::json) AS r(i int, id uuid, org text, origin text, key text, kind text,
        digest text, period date, hold_micros bigint, hold_tokens bigint, deadline_at timestamptz,
        created_at timestamptz, lease uuid, credit bigint, spend bigint, tokens bigint, key_id text)
    ),
    keys AS (
      SELECT k.key_id, (k.spend_limit_micros IS NOT NULL OR k.token_limit IS NOT NULL
          OR k.runs_per_minute IS NOT NULL) AS limited
      FROM key_accounts k WHERE k.key_id = ANY (ARRAY(SELECT key_id FROM req))
    ),
    key_position AS MATERIALIZED (
      SELECT ${keyPositionSql("$4::timestamptz")}
      WHERE k.key_id = ANY($3::text[])
    ),
    key_asks AS (
      SELECT c.i, p.key_id, p.bucket, p.spend_settled + p.spend_held + sum(c.hold_micros) OVER w AS spend,
        p.spend_limit, p.tokens_settled + p.tokens_held + sum(c.hold_tokens) OVER w AS tokens, p.token_limit,
        count(*) OVER w AS runs
      FROM req c JOIN key_position p ON p.key_id = c.key_id
      WINDOW w AS (PARTITION BY c.key_id ORDER BY c.i)
    ),
    key_fits AS (
      SELECT i, key_id FROM key_asks
      WHERE (spend_limit IS NULL OR spend <= spend_limit) AND (token_limit IS NULL OR tokens <= token_limit)
        AND (bucket IS NULL OR bucket >= runs)
    ),
    fresh AS (
      SELECT * FROM req r
      WHERE NOT EXISTS (SELECT 1 FROM keys k WHERE k.key_id = r.key_id AND k.limited)
        OR i IN (SELECT i FROM key_fits)
    ),
    need AS (
      SELECT lease, period, sum(credit) AS credit, sum(spend) AS spend, sum(tokens) AS tokens FROM fresh
      GROUP BY lease, period
    ),
    covering AS (
      SELECT l.id, l.period, l.billing FROM ledger_leases l JOIN need n ON n.lease = l.id
      WHERE l.id = ANY (ARRAY(SELECT lease FROM need)) AND l.period = n.period AND l.holder = $2 AND NOT l.revoked
        AND l.credit_held + n.credit <= l.credit_micros AND l.spend_held + n.spend <= l.spend_micros
        AND l.tokens_held + n.tokens <= l.tokens
    ),
    stored AS (
      INSERT INTO runs (id, organization_id, origin, idempotency_key, kind, state, input_digest, period, hold_micros,
        hold_tokens, hold_credit, held, deadline_at, created_at, holder, lease_id, key_id)
      SELECT f.id, f.org, f.origin, f.key, f.kind, 'pending', f.digest, f.period, f.hold_micros, f.hold_tokens,
        l.billing, true, f.deadline_at, f.created_at, $2, f.lease, f.key_id
      FROM fresh f JOIN covering l ON l.id = f.lease AND l.period = f.period
      ON CONFLICT DO NOTHING
      RETURNING id, key_id
    ),
    taken AS (
      SELECT f.lease, sum(f.credit) AS credit, sum(f.spend) AS spend, sum(f.tokens) AS tokens
      FROM fresh f WHERE f.id IN (SELECT id FROM stored)
      GROUP BY f.lease
    ),
    leased AS (
      UPDATE ledger_leases l SET credit_held = l.credit_held + t.credit, spend_held = l.spend_held + t.spend,
        tokens_held = l.tokens_held + t.tokens, version = l.version + 1
      FROM taken t
      WHERE l.id = t.lease AND l.id = ANY (ARRAY(SELECT lease FROM taken))
      RETURNING l.id, l.organization_id, to_char(l.period, 'YYYY-MM-DD') AS period, l.billing, l.spend_limited,
        l.tokens_limited, l.revoked, l.credit_micros, l.spend_micros, l.tokens, l.version
    ),
    existing AS (
      SELECT f.i, row_to_json(x) AS run FROM fresh f
      CROSS JOIN LATERAL (
        SELECT ${runColumns} FROM runs
        WHERE runs.organization_id = f.org AND runs.origin = f.origin AND runs.idempotency_key = f.key
        LIMIT 1
      ) x
      WHERE f.lease IN (SELECT id FROM covering) AND f.id NOT IN (SELECT id FROM stored)
    ),
    bucket_taken AS (
      UPDATE key_accounts k SET bucket_tokens = p.bucket - t.runs, bucket_at = $4::timestamptz
      FROM key_position p JOIN (SELECT key_id, count(*) AS runs FROM stored GROUP BY key_id) t ON t.key_id = p.key_id
      WHERE k.key_id = p.key_id AND p.bucket IS NOT NULL
    )
    SELECT (SELECT json_agg(json_build_object('i', i, 'run', run)) FROM existing) AS existing,
      (SELECT json_agg(id) FROM stored) AS stored,
      (SELECT json_agg(leased) FROM leased) AS leases,
      (SELECT json_agg(id) FROM covering) AS covered,
      (SELECT json_agg(key_id) FROM keys WHERE limited) AS limited`
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
  readonly covered: ReadonlyArray<string> | null
  readonly limited: ReadonlyArray<string> | null
}

/**
 * The batch's locks and the fast statement, in one transaction: in one round trip (db/OneRoundTrip.ts) when the
 * batch holds no key with limits, or, for a batch of runs of keys with limits, after locking those keys' rows in key
 * order (each key's lock, as on the exact way): the statement, taking a new snapshot after the locks, then reads
 * every earlier admission of those keys committed and checks each run against its key's limits, the runs of one key
 * counted in batch order.
 */
const runFast = (pool: pg.Pool, locks: ReadonlyArray<unknown>, values: ReadonlyArray<unknown>, limitedKeys: ReadonlyArray<string>) => {
  const steps = [{ statement: lockStatement, values: locks }, { statement: fastStatement, values }]
  return Effect.map(
    limitedKeys.length === 0
      ? inOneTransaction(pool, steps)
      : transaction(pool, (client) => Effect.andThen(query(client, lockKeys, [limitedKeys]), stepsInTransaction(client, steps))),
    (results) => results[1]![0] as FastRow | undefined
  )
}

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
    const locks = [
      [...new Set(batch.flatMap(({ run }) => (run.keyId === null ? [] : [run.keyId])))],
      [...new Set(batch.map(({ reservation }) => reservation.leaseId))]
    ]
    const row = yield* runFast(pool, locks, [payload, holder, keys, new Date().toISOString()], keys)
    const existing = new Map((row?.existing ?? []).map((entry) => [entry.i, runRowOfJson(entry.run)]))
    const stored = new Set(row?.stored ?? [])
    const leases = row?.leases ?? []
    const covered = new Set(row?.covered ?? [])
    const limited = new Set(row?.limited ?? [])
    const outcomes = batch.map(({ reservation, run }, i): FastOutcome => {
      const used = existing.get(i)
      if (used !== undefined) return { _tag: "KeyUsed", existing: used }
      if (stored.has(run.id)) return { _tag: "Stored" }
      if (run.keyId !== null && limited.has(run.keyId)) return { _tag: "KeyLimited" }
      return covered.has(reservation.leaseId) ? { _tag: "Raced" } : { _tag: "LeaseShort" }
    })
    return { outcomes, leases }
  })

/**
 * The run that owns a key a batch found taken though no run it could see owned it (another process stored it at
 * that moment, or an earlier run of the same batch): nothing was held for the run, whose owner is read now.
 */
export const ownerOf = (pool: pg.Pool, run: PendingRun): Effect.Effect<RunRow | undefined, SqlError> =>
  Effect.map(query<RunRow>(pool, existingStatement, [run.organizationId, run.origin, run.idempotencyKey]), ([owner]) => owner)
