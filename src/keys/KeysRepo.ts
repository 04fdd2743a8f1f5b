/**
 * The `api_keys` table (only this module writes it). Keys are looked up by the SHA-256 of their secret; every other
 * access is scoped to one organization, so another organization's key is indistinguishable from an unknown one.
 * Its layer also provides authentication's port over the table (`KeyCredentials`).
 */
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { Principal } from "../../schema/Auth.js"
import type { DatabaseUnavailable } from "../../schema/Errors.js"
import type { Scope } from "../../schema/Scope.js"
import { KeyCredentials, type KeyUse } from "../auth/KeyCredentials.js"
import { orUnavailable, transactionOrUnavailable } from "../db/Unavailable.js"
import { type KeyLimits, type KeyPeriod, keyPositionSql, periodStart } from "../ledger/KeyAccounts.js"

/** A stored key (never its secret). */
export interface KeyRow {
  readonly id: string
  readonly organization_id: string
  readonly name: string
  readonly principal_type: Principal["type"]
  readonly principal_id: string
  readonly scopes: ReadonlyArray<Scope>
  readonly secret_prefix: string
  readonly state: "active" | "revoked"
  readonly created_by: string
  readonly created_at: Date
  readonly last_used_at: Date | null
  readonly revoked_at: Date | null
}

/** A stored key with its account: limits and usage. */
export interface KeyAccountRow extends KeyRow {
  /** Its limits (null where unset; all null for a key without an account row, which migration 0009 backfills). */
  readonly spend_limit: number | null
  readonly token_limit: number | null
  readonly runs_per_minute: number | null
  readonly period: KeyPeriod | null
  /** Its usage in its current period, as admission reads it (KeyAccounts.ts). */
  readonly period_start: Date | null
  readonly spend_settled: number | null
  readonly tokens_settled: number | null
  readonly spend_held: number | null
  readonly tokens_held: number | null
}

/** A key to insert. */
export interface NewKey {
  readonly id: string
  readonly organizationId: string
  readonly name: string
  readonly principal: Principal
  readonly scopes: ReadonlyArray<Scope>
  readonly secretHash: Buffer
  readonly secretPrefix: string
  readonly createdBy: string
  readonly limits: KeyLimits
  /** When its first period starts (`periodStart` of its period, now). */
  readonly periodStart: Date
}

/** The repository's operations. */
export interface KeysRepoService {
  /** The key holding a secret hash, if any. */
  readonly findBySecretHash: (hash: Buffer) => Effect.Effect<Option.Option<KeyRow>, DatabaseUnavailable>
  /** Every key of an organization, newest first. */
  readonly list: (organizationId: string) => Effect.Effect<ReadonlyArray<KeyAccountRow>, DatabaseUnavailable>
  /** One key of an organization. */
  readonly get: (organizationId: string, keyId: string) => Effect.Effect<Option.Option<KeyAccountRow>, DatabaseUnavailable>
  /** Stores a new active key. */
  readonly insert: (key: NewKey) => Effect.Effect<KeyAccountRow, DatabaseUnavailable>
  /** Revokes an active key (no change to one already revoked); returns the key as stored, if it exists. */
  readonly revoke: (organizationId: string, keyId: string) => Effect.Effect<Option.Option<KeyAccountRow>, DatabaseUnavailable>
  /** Gives an active key a new secret; returns the key and its previous secret hash, if it was active. */
  readonly rotate: (
    organizationId: string,
    keyId: string,
    hash: Buffer,
    prefix: string
  ) => Effect.Effect<Option.Option<KeyAccountRow & { readonly previous_hash: Buffer }>, DatabaseUnavailable>
  /** The secret hash of a key (to forget cached verifications after a revocation). */
  readonly hashOf: (keyId: string) => Effect.Effect<Option.Option<Buffer>, DatabaseUnavailable>
  /**
   * Sets an active key's limits (the key's lock held: an admission of the key waits, then sees them); a changed
   * period starts the settled counters again from the key's runs of the new period, a changed `runs_per_minute`
   * starts a full bucket. None when the key is not active.
   */
  readonly setLimits: (
    organizationId: string,
    keyId: string,
    limits: KeyLimits
  ) => Effect.Effect<Option.Option<void>, DatabaseUnavailable>
  /** Records uses: sets `last_used_at` where it is unset or more than a minute old. */
  readonly touch: (uses: ReadonlyArray<KeyUse>) => Effect.Effect<void, DatabaseUnavailable>
}

const keyColumns = (alias: string) =>
  ["id", "organization_id", "name", "principal_type", "principal_id", "scopes", "secret_prefix", "state", "created_by",
    "created_at", "last_used_at", "revoked_at"].map((column) => `${alias}.${column}`).join(", ")

/** A key's row with its limits and usage (`a`: the key; its position read as admission reads it). */
const viewOf = (from: string) =>
  `SELECT ${keyColumns("a")}, p.spend_limit, p.token_limit, p.runs_per_minute, p.period, p.period_start,
      p.spend_settled, p.tokens_settled, p.spend_held, p.tokens_held
    FROM ${from}
    LEFT JOIN LATERAL (SELECT ${keyPositionSql("now()")} WHERE k.key_id = a.id) p ON true`

/** The key's runs of its period, settled (for a period changed by `setLimits`). */
const settledSince = `SELECT COALESCE(sum(cost_micros), 0)::bigint AS spend, COALESCE(sum(input_tokens + output_tokens), 0)::bigint AS tokens
  FROM runs WHERE key_id = $1 AND NOT held AND created_at >= $2::timestamptz`

/** Inserts a key with its account row in one statement. */
const insertKey = (sql: SqlClient.SqlClient): KeysRepoService["insert"] => (key) =>
  orUnavailable(
    Effect.map(
      sql<KeyAccountRow>`WITH a AS (
          INSERT INTO api_keys AS a (id, organization_id, name, principal_type, principal_id, scopes,
            secret_sha256, secret_prefix, state, created_by)
          VALUES (${key.id}, ${key.organizationId}, ${key.name}, ${key.principal.type}, ${key.principal.id},
            ${key.scopes}::text[], ${key.secretHash}, ${key.secretPrefix}, 'active', ${key.createdBy})
          RETURNING ${sql.literal(keyColumns("a"))}
        ),
        k AS (
          INSERT INTO key_accounts (key_id, organization_id, spend_limit_micros, token_limit, runs_per_minute, period,
            period_start)
          SELECT id, organization_id, ${key.limits.spendMicros}, ${key.limits.tokens}, ${key.limits.runsPerMinute},
            ${key.limits.period}, ${key.periodStart.toISOString()}::timestamptz FROM a
          RETURNING key_id, spend_limit_micros, token_limit, runs_per_minute, period, period_start
        )
        SELECT ${sql.literal(keyColumns("a"))}, k.spend_limit_micros AS spend_limit, k.token_limit, k.runs_per_minute, k.period,
          k.period_start, 0 AS spend_settled, 0 AS tokens_settled, 0 AS spend_held, 0 AS tokens_held
        FROM a JOIN k ON k.key_id = a.id`,
      (rows) => rows[0]!
    )
  )

/** Revokes an active key; the key as stored either way (reading the update's own result). */
const revokeKey = (sql: SqlClient.SqlClient): KeysRepoService["revoke"] => (organizationId, keyId) =>
  orUnavailable(
    Effect.map(
      sql<KeyAccountRow>`WITH revoked AS (
          UPDATE api_keys SET state = 'revoked', revoked_at = now()
          WHERE organization_id = ${organizationId} AND id = ${keyId} AND state = 'active'
          RETURNING ${sql.literal(keyColumns("api_keys"))}
        ),
        a AS (
          SELECT * FROM revoked
          UNION ALL
          SELECT ${sql.literal(keyColumns("api_keys"))} FROM api_keys WHERE organization_id = ${organizationId} AND id = ${keyId}
            AND NOT EXISTS (SELECT 1 FROM revoked)
        )
        ${sql.literal(viewOf("a"))}`,
      (rows) => Option.fromNullishOr(rows[0])
    )
  )

/** Gives an active key a new secret; the key with its previous secret hash. */
const rotateKey = (sql: SqlClient.SqlClient): KeysRepoService["rotate"] => (organizationId, keyId, hash, prefix) =>
  orUnavailable(
    Effect.map(
      sql<KeyAccountRow & { readonly previous_hash: Buffer }>`WITH rotated AS (
          UPDATE api_keys AS k
          SET secret_sha256 = ${hash}, secret_prefix = ${prefix}
          FROM (SELECT id, secret_sha256 AS previous_hash FROM api_keys
                WHERE organization_id = ${organizationId} AND id = ${keyId} AND state = 'active' FOR UPDATE) AS old
          WHERE k.id = old.id
          RETURNING k.id, k.secret_prefix, old.previous_hash
        )
        ${sql.literal(viewOf("rotated r JOIN api_keys a ON a.id = r.id").replace(
          `SELECT ${keyColumns("a")},`,
          `SELECT ${keyColumns("a").replace("a.secret_prefix", "r.secret_prefix")}, r.previous_hash,`
        ))}`,
      (rows) => Option.fromNullishOr(rows[0])
    )
  )

/** Sets a key's limits under its lock (see `KeysRepoService.setLimits`). */
const setKeyLimits = (sql: SqlClient.SqlClient): KeysRepoService["setLimits"] => (organizationId, keyId, limits) =>
  transactionOrUnavailable(sql, Effect.gen(function*() {
    const [current] = yield* sql<{ period: KeyPeriod; runs_per_minute: number | null; created_at: Date }>`
      SELECT k.period, k.runs_per_minute, a.created_at FROM key_accounts k JOIN api_keys a ON a.id = k.key_id
      WHERE k.key_id = ${keyId} AND a.organization_id = ${organizationId} AND a.state = 'active'
      FOR UPDATE OF k`
    if (current === undefined) return Option.none()
    const bucketReset = current.runs_per_minute !== limits.runsPerMinute
    yield* sql`UPDATE key_accounts SET spend_limit_micros = ${limits.spendMicros}, token_limit = ${limits.tokens},
        runs_per_minute = ${limits.runsPerMinute}, period = ${limits.period},
        bucket_tokens = CASE WHEN ${bucketReset} THEN NULL ELSE bucket_tokens END,
        bucket_at = CASE WHEN ${bucketReset} THEN NULL ELSE bucket_at END
      WHERE key_id = ${keyId}`
    if (current.period !== limits.period) {
      const start = limits.period === "total" ? current.created_at : periodStart(limits.period, new Date())
      const [settled] = yield* sql.unsafe<{ spend: number; tokens: number }>(settledSince, [keyId, start.toISOString()])
      yield* sql`UPDATE key_accounts SET period_start = ${start.toISOString()}::timestamptz,
          spend_settled_micros = ${settled!.spend}, tokens_settled = ${settled!.tokens}
        WHERE key_id = ${keyId}`
    }
    return Option.some(undefined)
  }))

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const cols = sql.literal(keyColumns("a"))
  const view = sql.literal(viewOf("api_keys a"))
  return KeysRepo.of({
    findBySecretHash: (hash) =>
      orUnavailable(
        Effect.map(
          sql<KeyRow>`SELECT ${cols} FROM api_keys a WHERE secret_sha256 = ${hash}`,
          (rows) => Option.fromNullishOr(rows[0])
        )
      ),
    list: (organizationId) =>
      orUnavailable(
        sql<KeyAccountRow>`${view} WHERE a.organization_id = ${organizationId} ORDER BY a.created_at DESC, a.id DESC`
      ),
    get: (organizationId, keyId) =>
      orUnavailable(
        Effect.map(
          sql<KeyAccountRow>`${view} WHERE a.organization_id = ${organizationId} AND a.id = ${keyId}`,
          (rows) => Option.fromNullishOr(rows[0])
        )
      ),
    insert: insertKey(sql),
    revoke: revokeKey(sql),
    rotate: rotateKey(sql),
    setLimits: setKeyLimits(sql),
    hashOf: (keyId) =>
      orUnavailable(
        Effect.map(
          sql<{ secret_sha256: Buffer }>`SELECT secret_sha256 FROM api_keys WHERE id = ${keyId}`,
          (rows) => Option.fromNullishOr(rows[0]?.secret_sha256)
        )
      ),
    touch: (uses) =>
      uses.length === 0
        ? Effect.void
        : orUnavailable(
          sql`UPDATE api_keys AS k SET last_used_at = u.at
            FROM (SELECT unnest(${uses.map((use) => use.keyId)}::text[]) AS id,
                         unnest(${uses.map((use) => use.at.toISOString())}::timestamptz[]) AS at) AS u
            WHERE k.id = u.id AND k.state = 'active'
              AND (k.last_used_at IS NULL OR k.last_used_at < u.at - interval '1 minute')`
        ).pipe(Effect.asVoid)
  })
})

/** Storage of API keys. */
export class KeysRepo extends Context.Service<KeysRepo, KeysRepoService>()("KeysRepo") {
  /** The repository over the SQL client, with authentication's `KeyCredentials` over it. */
  static readonly layer = Layer.effect(
    KeyCredentials,
    Effect.map(KeysRepo, (repo) => KeyCredentials.of({ findBySecretHash: repo.findBySecretHash, recordUses: repo.touch }))
  ).pipe(Layer.provideMerge(Layer.effect(KeysRepo, make)))
}
