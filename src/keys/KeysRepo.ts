/**
 * The `api_keys` table (only this module writes it). Keys are looked up by the SHA-256 of their secret; every other
 * access is scoped to one organization, so another organization's key is indistinguishable from an unknown one.
 * Its layer also provides authentication's port over the table (`KeyCredentials`).
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import type { Principal } from "../../schema/Auth.js"
import type { DatabaseUnavailable } from "../../schema/Errors.js"
import type { Scope } from "../../schema/Scope.js"
import { KeyCredentials, type KeyUse } from "../auth/KeyCredentials.js"
import { orUnavailable } from "../db/Unavailable.js"

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
}

/** The repository's operations. */
export interface KeysRepoService {
  /** The key holding a secret hash, if any. */
  readonly findBySecretHash: (hash: Buffer) => Effect.Effect<Option.Option<KeyRow>, DatabaseUnavailable>
  /** Every key of an organization, newest first. */
  readonly list: (organizationId: string) => Effect.Effect<ReadonlyArray<KeyRow>, DatabaseUnavailable>
  /** One key of an organization. */
  readonly get: (organizationId: string, keyId: string) => Effect.Effect<Option.Option<KeyRow>, DatabaseUnavailable>
  /** Stores a new active key. */
  readonly insert: (key: NewKey) => Effect.Effect<KeyRow, DatabaseUnavailable>
  /** Revokes an active key (no change to one already revoked); returns the key as stored, if it exists. */
  readonly revoke: (organizationId: string, keyId: string) => Effect.Effect<Option.Option<KeyRow>, DatabaseUnavailable>
  /** Gives an active key a new secret; returns the key and its previous secret hash, if it was active. */
  readonly rotate: (
    organizationId: string,
    keyId: string,
    hash: Buffer,
    prefix: string
  ) => Effect.Effect<Option.Option<KeyRow & { readonly previous_hash: Buffer }>, DatabaseUnavailable>
  /** The secret hash of a key (to forget cached verifications after a revocation). */
  readonly hashOf: (keyId: string) => Effect.Effect<Option.Option<Buffer>, DatabaseUnavailable>
  /** Records uses: sets `last_used_at` where it is unset or more than a minute old. */
  readonly touch: (uses: ReadonlyArray<KeyUse>) => Effect.Effect<void, DatabaseUnavailable>
}

const columns = "id, organization_id, name, principal_type, principal_id, scopes, secret_prefix, state, created_by, created_at, last_used_at, revoked_at"

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const cols = sql.literal(columns)
  return KeysRepo.of({
    findBySecretHash: (hash) =>
      orUnavailable(
        Effect.map(
          sql<KeyRow>`SELECT ${cols} FROM api_keys WHERE secret_sha256 = ${hash}`,
          (rows) => Option.fromNullable(rows[0])
        )
      ),
    list: (organizationId) =>
      orUnavailable(
        sql<KeyRow>`SELECT ${cols} FROM api_keys WHERE organization_id = ${organizationId}
          ORDER BY created_at DESC, id DESC`
      ),
    get: (organizationId, keyId) =>
      orUnavailable(
        Effect.map(
          sql<KeyRow>`SELECT ${cols} FROM api_keys WHERE organization_id = ${organizationId} AND id = ${keyId}`,
          (rows) => Option.fromNullable(rows[0])
        )
      ),
    insert: (key) =>
      orUnavailable(
        Effect.map(
          sql<KeyRow>`INSERT INTO api_keys (id, organization_id, name, principal_type, principal_id, scopes,
              secret_sha256, secret_prefix, state, created_by)
            VALUES (${key.id}, ${key.organizationId}, ${key.name}, ${key.principal.type}, ${key.principal.id},
              ${key.scopes}::text[], ${key.secretHash}, ${key.secretPrefix}, 'active', ${key.createdBy})
            RETURNING ${cols}`,
          (rows) => rows[0]!
        )
      ),
    revoke: (organizationId, keyId) =>
      orUnavailable(
        Effect.map(
          sql<KeyRow>`WITH revoked AS (
              UPDATE api_keys SET state = 'revoked', revoked_at = now()
              WHERE organization_id = ${organizationId} AND id = ${keyId} AND state = 'active'
              RETURNING ${cols})
            SELECT ${cols} FROM revoked
            UNION ALL
            SELECT ${cols} FROM api_keys WHERE organization_id = ${organizationId} AND id = ${keyId}
              AND NOT EXISTS (SELECT 1 FROM revoked)`,
          (rows) => Option.fromNullable(rows[0])
        )
      ),
    rotate: (organizationId, keyId, hash, prefix) =>
      orUnavailable(
        Effect.map(
          sql<KeyRow & { readonly previous_hash: Buffer }>`UPDATE api_keys AS k
            SET secret_sha256 = ${hash}, secret_prefix = ${prefix}
            FROM (SELECT id, secret_sha256 AS previous_hash FROM api_keys
                  WHERE organization_id = ${organizationId} AND id = ${keyId} AND state = 'active' FOR UPDATE) AS old
            WHERE k.id = old.id
            RETURNING k.id, k.organization_id, k.name, k.principal_type, k.principal_id, k.scopes, k.secret_prefix,
              k.state, k.created_by, k.created_at, k.last_used_at, k.revoked_at, old.previous_hash`,
          (rows) => Option.fromNullable(rows[0])
        )
      ),
    hashOf: (keyId) =>
      orUnavailable(
        Effect.map(
          sql<{ secret_sha256: Buffer }>`SELECT secret_sha256 FROM api_keys WHERE id = ${keyId}`,
          (rows) => Option.fromNullable(rows[0]?.secret_sha256)
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
export class KeysRepo extends Context.Tag("KeysRepo")<KeysRepo, KeysRepoService>() {
  /** The repository over the SQL client, with authentication's `KeyCredentials` over it. */
  static readonly layer = Layer.effect(
    KeyCredentials,
    Effect.map(KeysRepo, (repo) => KeyCredentials.of({ findBySecretHash: repo.findBySecretHash, recordUses: repo.touch }))
  ).pipe(Layer.provideMerge(Layer.effect(KeysRepo, make)))
}
