/**
 * What authentication reads and writes of API keys, as a port: `auth/` declares it, `keys/` implements it over the
 * `api_keys` table (`KeysRepo.layer` provides it), so the verifier never reaches into another folder's tables and
 * `keys/` may use `auth/` (secrets, the verifier's cache) without a cycle.
 */
import { Context } from "effect"
import type { Effect, Option } from "effect"
import type { Principal } from "../../schema/Auth.js"
import type { DatabaseUnavailable } from "../../schema/Errors.js"
import type { Scope } from "../../schema/Scope.js"

/** A stored key as authentication sees it (never its secret). */
export interface KeyCredential {
  readonly id: string
  readonly organization_id: string
  readonly principal_type: Principal["type"]
  readonly principal_id: string
  readonly scopes: ReadonlyArray<Scope>
  readonly state: "active" | "revoked"
}

/** One use of a key, noted when it authenticated a request. */
export interface KeyUse {
  readonly keyId: string
  readonly at: Date
}

/** The key operations authentication needs. */
export interface KeyCredentialsService {
  /** The key holding a secret hash (SHA-256 of the secret), if any. */
  readonly findBySecretHash: (hash: Buffer) => Effect.Effect<Option.Option<KeyCredential>, DatabaseUnavailable>
  /** Records uses: `last_used_at` set where unset or more than a minute older, on active keys only. */
  readonly recordUses: (uses: ReadonlyArray<KeyUse>) => Effect.Effect<void, DatabaseUnavailable>
}

/** The keys authentication verifies against. */
export class KeyCredentials extends Context.Service<KeyCredentials, KeyCredentialsService>()("KeyCredentials") {}
