/**
 * An API key's own limits (decisions.md, Extensions): spend and tokens per period (a UTC day or month, or all time)
 * and runs per minute, checked at admission right after the organization's quota with the same ceilings and token
 * reservations. A key's account row (`key_accounts`) is its lock and holds its limits, the settled part of its usage
 * for its current period (grown by settlement) and its token bucket; what it holds is read from its runs still
 * holding. A run of a key with any limit is admitted under the key's lock (the exact way, or a keyed batch of the
 * fast way, Admission.ts); a plain fast batch takes the key's row in share mode and admits only runs of keys without
 * limits, so a limit set while a batch runs is waited for and then applies.
 */
import type { SqlError } from "effect/sql/SqlError"
import { Effect } from "effect"
import type pg from "pg"
import { query, type Statement } from "../db/LedgerSql.js"
import type { QuotaRefusal } from "./QuotaLedger.js"

/** The period a key's spend and token limits count over. */
export type KeyPeriod = "day" | "month" | "total"

/** A key's limits; null where unset. */
export interface KeyLimits {
  readonly spendMicros: number | null
  readonly tokens: number | null
  readonly runsPerMinute: number | null
  readonly period: KeyPeriod
}

/** No limits: what a key has until some are set. */
export const NoLimits: KeyLimits = { spendMicros: null, tokens: null, runsPerMinute: null, period: "month" }

const dayStart = (now: string) => `date_trunc('day', ${now} AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`
const monthStart = (now: string) => `date_trunc('month', ${now} AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`

/** The start of the period containing `now` (the account's stored start for `total`), as SQL over column names. */
const periodStartSql = (period: string, storedStart: string, now: string): string =>
  `CASE ${period} WHEN 'day' THEN ${dayStart(now)} WHEN 'month' THEN ${monthStart(now)} ELSE ${storedStart} END`

/** The start of the period containing `now`, in TypeScript (a key's first period; `total` starts at `now`). */
export const periodStart = (period: KeyPeriod, now: Date): Date => {
  switch (period) {
    case "day":
      return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()))
    case "month":
      return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1))
    case "total":
      return now
  }
}

/**
 * The columns of a key's position at `now` over `key_accounts k` (a lateral `s` gives the period's start): limits,
 * settled usage of the current period (zero when the stored counters are of an earlier one), the holds of its runs
 * admitted in the period and still holding, and the bucket refilled to `now`.
 */
export const keyPositionSql = (now: string): string =>
  `k.key_id, k.spend_limit_micros AS spend_limit, k.token_limit, k.runs_per_minute, k.period, s.start AS period_start,
    CASE WHEN k.period_start = s.start THEN k.spend_settled_micros ELSE 0 END AS spend_settled,
    CASE WHEN k.period_start = s.start THEN k.tokens_settled ELSE 0 END AS tokens_settled,
    COALESCE(h.spend, 0)::bigint AS spend_held, COALESCE(h.tokens, 0)::bigint AS tokens_held,
    CASE WHEN k.runs_per_minute IS NULL THEN NULL
      ELSE LEAST(k.runs_per_minute::float8, COALESCE(k.bucket_tokens, k.runs_per_minute::float8)
        + GREATEST(0, extract(epoch FROM (${now} - COALESCE(k.bucket_at, ${now})))) * k.runs_per_minute / 60.0) END
      AS bucket
  FROM key_accounts k
  CROSS JOIN LATERAL (SELECT ${periodStartSql("k.period", "k.period_start", now)} AS start) s
  LEFT JOIN LATERAL (SELECT sum(r.hold_micros) AS spend, sum(r.hold_tokens) AS tokens FROM runs r
    WHERE r.key_id = k.key_id AND r.held AND r.created_at >= s.start) h ON true`

/** A key's position as `keyPositionSql` reads it. */
export interface KeyPositionRow {
  readonly key_id: string
  readonly spend_limit: number | null
  readonly token_limit: number | null
  readonly runs_per_minute: number | null
  readonly period: KeyPeriod
  readonly period_start: Date
  readonly spend_settled: number
  readonly tokens_settled: number
  readonly spend_held: number
  readonly tokens_held: number
  readonly bucket: number | null
}

/** Why a key's limits refuse a run: a limit of its period (in the quota's terms), or its rate. */
export type KeyRefusal =
  | QuotaRefusal & { readonly _tag: "KeyQuota"; readonly period: KeyPeriod }
  | { readonly _tag: "KeyRate"; readonly runsPerMinute: number; readonly retryAfterSeconds: number }

/**
 * The key's rule for a run asking `micros` and `tokens`: spend, then tokens (settled + held + asked within each
 * limit), then the rate (a whole run left in the bucket). `Retry-After` is the wait until the bucket holds one run.
 */
export const checkKey = (
  position: KeyPositionRow,
  ask: { readonly micros: number; readonly tokens: number }
): KeyRefusal | undefined => {
  const { period } = position
  if (position.spend_limit !== null && position.spend_settled + position.spend_held + ask.micros > position.spend_limit) {
    const { spend_held: held, spend_limit: limit, spend_settled: used } = position
    return { _tag: "KeyQuota", quota: "spend", limit, used, held, asked: ask.micros, period }
  }
  if (position.token_limit !== null && position.tokens_settled + position.tokens_held + ask.tokens > position.token_limit) {
    const { token_limit: limit, tokens_held: held, tokens_settled: used } = position
    return { _tag: "KeyQuota", quota: "tokens", limit, used, held, asked: ask.tokens, period }
  }
  if (position.runs_per_minute !== null && position.bucket !== null && position.bucket < 1) {
    const seconds = Math.ceil(((1 - position.bucket) * 60) / position.runs_per_minute)
    return { _tag: "KeyRate", runsPerMinute: position.runs_per_minute, retryAfterSeconds: Math.max(1, seconds) }
  }
  return undefined
}

const keyLimited: Statement = {
  name: "ledger_key_limited",
  text: `SELECT (spend_limit_micros IS NOT NULL OR token_limit IS NOT NULL OR runs_per_minute IS NOT NULL) AS limited
    FROM key_accounts WHERE key_id = $1`
}

const lockKey: Statement = {
  name: "ledger_key_lock",
  text: "SELECT 1 FROM key_accounts WHERE key_id = $1 FOR UPDATE"
}

const keyPosition: Statement = {
  name: "ledger_key_position",
  text: `SELECT ${keyPositionSql("$2::timestamptz")} WHERE k.key_id = $1`
}

const takeRun: Statement = {
  name: "ledger_key_take_run",
  text: "UPDATE key_accounts SET bucket_tokens = $2, bucket_at = $3::timestamptz WHERE key_id = $1"
}

/**
 * For a key with limits, locks its account row (the key's lock, inside the caller's transaction, after the
 * organization's) and reads its position at `now`: the lock first and the read after it, so the read sees what the
 * previous holder committed. None for a key without limits, whose row is not locked: every other admission of the
 * key the exact way waits on the organization's lock this transaction holds, and a limit set meanwhile waits for
 * the fast way's share locks, so a run admitted here without the key's checks is ordered before the limit.
 */
export const lockKeyPosition = (
  client: pg.PoolClient,
  keyId: string,
  now: Date
): Effect.Effect<KeyPositionRow | undefined, SqlError> =>
  Effect.gen(function*() {
    const [limits] = yield* query<{ limited: boolean }>(client, keyLimited, [keyId])
    if (limits === undefined || !limits.limited) return undefined
    yield* query(client, lockKey, [keyId])
    const [row] = yield* query<KeyPositionRow>(client, keyPosition, [keyId, now.toISOString()])
    return row
  })

/** An admitted run takes one run from the key's bucket (only a key with `runs_per_minute`). */
export const takeFromBucket = (
  client: pg.PoolClient,
  position: KeyPositionRow,
  now: Date
): Effect.Effect<void, SqlError> =>
  position.bucket === null
    ? Effect.void
    : Effect.asVoid(query(client, takeRun, [position.key_id, position.bucket - 1, now.toISOString()]))

/** The part of a key's moves its period counts (the key's latest row decides, so a period changed meanwhile holds). */
const forPeriod = (day: string, month: string, all: string) =>
  `CASE k.period WHEN 'day' THEN d.${day} WHEN 'month' THEN d.${month} ELSE d.${all} END`

const startOfK = periodStartSql("k.period", "k.period_start", "$5::timestamptz")

/**
 * Settlement's part (a fragment of the settlement statement over its `moves`, with `$5` the settlement's time):
 * each key's settled counters grow by what its runs of the current period billed, starting again from zero when
 * the key's period has turned since they were last written. The sums are made for each kind of period and the
 * key's row, as the update finds it, picks one: a `PATCH` changing the period while the batch waits is respected.
 */
export const settleOnKeysStatement = `
  key_moves AS (
    SELECT m.key_id,
      COALESCE(sum(m.cost) FILTER (WHERE m.created_at >= ${dayStart("$5::timestamptz")}), 0) AS cost_day,
      COALESCE(sum(m.cost) FILTER (WHERE m.created_at >= ${monthStart("$5::timestamptz")}), 0) AS cost_month,
      sum(m.cost) AS cost_all,
      COALESCE(sum(m.tokens) FILTER (WHERE m.created_at >= ${dayStart("$5::timestamptz")}), 0) AS tokens_day,
      COALESCE(sum(m.tokens) FILTER (WHERE m.created_at >= ${monthStart("$5::timestamptz")}), 0) AS tokens_month,
      sum(m.tokens) AS tokens_all
    FROM moves m WHERE m.key_id IS NOT NULL
    GROUP BY m.key_id
    ORDER BY m.key_id
  ),
  keyed AS (
    UPDATE key_accounts k SET period_start = ${startOfK},
      spend_settled_micros = CASE WHEN k.period_start = ${startOfK} THEN k.spend_settled_micros ELSE 0 END
        + ${forPeriod("cost_day", "cost_month", "cost_all")},
      tokens_settled = CASE WHEN k.period_start = ${startOfK} THEN k.tokens_settled ELSE 0 END
        + ${forPeriod("tokens_day", "tokens_month", "tokens_all")}
    FROM key_moves d
    WHERE k.key_id = d.key_id AND k.key_id = ANY (ARRAY(SELECT key_id FROM key_moves))
    RETURNING k.key_id
  )`

/** How long a key seen with limits has its runs batched under its lock (keyed batches), even once they are cleared. */
export const LimitedKeyMemoryMs = 30_000

/** Keys seen with limits lately (bounded: the oldest are forgotten first). */
export class RecentKeys {
  private readonly seen = new Map<string, number>()
  constructor(private readonly ttlMs: number, private readonly capacity = 10_000) {}
  add(keyId: string, now: number): void {
    this.seen.delete(keyId)
    this.seen.set(keyId, now + this.ttlMs)
    if (this.seen.size > this.capacity) this.seen.delete(this.seen.keys().next().value!)
  }
  has(keyId: string, now: number): boolean {
    const until = this.seen.get(keyId)
    if (until === undefined) return false
    if (until > now) return true
    this.seen.delete(keyId)
    return false
  }
}
