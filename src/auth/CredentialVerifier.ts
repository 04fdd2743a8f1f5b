/**
 * Bearer credential -> Actor. API keys (`otsk_` + 64 lowercase hex) are compared by the SHA-256 of the secret; the
 * answer is cached for at most a second, so a revocation or rotation takes effect at once on the process that made
 * it (which forgets the entry) and within a second on every other; an `otsk_` credential of another shape is a
 * malformed key (`401 invalid_credential`). Anything else, whatever its shape (spec, Authentication: "an API key
 * or, for anything else, a console session token"), is a console session token:
 * `503 auth_not_configured` while no trust keys are configured; otherwise verified against the trust keys (one that
 * does not verify is `401 invalid_credential`), then the member's role in the token's organization gives the scopes
 * (a role outside the table, or no membership, gives none). Fails closed: 503 when it cannot decide.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { ActorShape } from "../../schema/Auth.js"
import {
  AuthNotConfigured,
  DatabaseUnavailable,
  InvalidCredential,
  NoActiveOrganization,
  TrustKeysUnavailable
} from "../../schema/Errors.js"
import { scopesOfRole, type Scope } from "../../schema/Scope.js"
import { type KeyCredential, KeyCredentials, type KeyCredentialsService } from "./KeyCredentials.js"
import { isWellFormedSecret, secretHash } from "./KeySecrets.js"
import { LastUsed, type LastUsedService } from "./LastUsed.js"
import { MemberRoles, type MemberRolesService } from "./MemberRoles.js"
import { SessionKeys, type SessionKeysService } from "./SessionKeys.js"

/** Ways a credential can fail to authenticate. */
export type VerifyError =
  | InvalidCredential
  | NoActiveOrganization
  | AuthNotConfigured
  | TrustKeysUnavailable
  | DatabaseUnavailable

const CacheTtlMs = 1_000
const CacheLimit = 10_000

/** A small time-bounded cache, oldest entries dropped first when full. */
const boundedCache = <A>() => {
  const entries = new Map<string, { readonly value: A; readonly until: number }>()
  return {
    get: (key: string): Option.Option<A> => {
      const entry = entries.get(key)
      if (entry === undefined) return Option.none()
      if (entry.until < Date.now()) {
        entries.delete(key)
        return Option.none()
      }
      return Option.some(entry.value)
    },
    set: (key: string, value: A): void => {
      if (entries.size >= CacheLimit) entries.delete(entries.keys().next().value!)
      entries.set(key, { value, until: Date.now() + CacheTtlMs })
    },
    delete: (key: string): void => void entries.delete(key)
  }
}

/** The verifier's operations. */
export interface CredentialVerifierService {
  /** Authenticates a bearer credential. */
  readonly verify: (credential: string) => Effect.Effect<ActorShape, VerifyError>
  /** Forgets what is cached about a secret hash (after its key is revoked or rotated). */
  readonly forget: (hash: Buffer) => void
  /** Writes a key's pending `last_used_at` now (before the key is revoked, so the revoked key is final). */
  readonly recordUseNow: (keyId: string) => Effect.Effect<void>
}

const rejected = () => new InvalidCredential({ message: "the credential is not a valid API key or session" })

type Cache<A> = ReturnType<typeof boundedCache<A>>

/** The actor of a key that authenticates: an active one. */
const actorOfKey = (row: Option.Option<KeyCredential>): ActorShape | null =>
  Option.isSome(row) && row.value.state === "active"
    ? {
      organizationId: row.value.organization_id,
      principal: { type: row.value.principal_type, id: row.value.principal_id },
      scopes: new Set(row.value.scopes),
      credential: { kind: "api_key", keyId: row.value.id }
    } satisfies ActorShape
    : null

/** API keys, by the hash of their secret, the answer cached (a key that does not authenticate too). */
const keyVerifier = (keys: KeyCredentialsService, lastUsed: LastUsedService, cache: Cache<ActorShape | null>) =>
(secret: string): Effect.Effect<ActorShape, VerifyError> => {
  const hash = secretHash(secret)
  const cacheKey = hash.toString("hex")
  const hit = cache.get(cacheKey)
  const lookup = Option.isSome(hit)
    ? Effect.succeed(hit.value)
    : Effect.map(keys.findBySecretHash(hash), (row) => {
      const actor = actorOfKey(row)
      cache.set(cacheKey, actor)
      return actor
    })
  return Effect.flatMap(lookup, (actor) => {
    if (actor === null) return Effect.fail(rejected())
    if (actor.credential.kind === "api_key") lastUsed.record(actor.credential.keyId)
    return Effect.succeed(actor)
  })
}

/** The scopes a member's role gives (none for no membership or a role outside the table), cached. */
const roleScopes = (members: MemberRolesService, cache: Cache<ReadonlySet<Scope>>) =>
(organizationId: string, userId: string) => {
  const cacheKey = `${organizationId}\u0000${userId}`
  const hit = cache.get(cacheKey)
  if (Option.isSome(hit)) return Effect.succeed(hit.value)
  return Effect.map(members.roleOf(organizationId, userId), (role) => {
    const scopes = new Set(Option.match(role, { onNone: () => [], onSome: scopesOfRole }))
    cache.set(cacheKey, scopes)
    return scopes as ReadonlySet<Scope>
  })
}

/** Console sessions: the token's claims, then the member's role in its organization. */
const sessionVerifier = (sessions: SessionKeysService, scopesOf: ReturnType<typeof roleScopes>) =>
(token: string): Effect.Effect<ActorShape, VerifyError> =>
  Effect.gen(function*() {
    const claims = yield* sessions.verify(token)
    if (Option.isNone(claims.organizationId)) {
      return yield* new NoActiveOrganization({ message: "the session has no organization selected" })
    }
    const scopes = yield* scopesOf(claims.organizationId.value, claims.userId)
    return {
      organizationId: claims.organizationId.value,
      principal: { type: "user", id: claims.userId },
      scopes,
      credential: { kind: "session" }
    } satisfies ActorShape
  })

const make = Effect.gen(function*() {
  const lastUsed = yield* LastUsed
  const keyCache = boundedCache<ActorShape | null>()
  const verifyKey = keyVerifier(yield* KeyCredentials, lastUsed, keyCache)
  const verifySession = sessionVerifier(yield* SessionKeys, roleScopes(yield* MemberRoles, boundedCache<ReadonlySet<Scope>>()))
  return CredentialVerifier.of({
    verify: (credential) =>
      credential.startsWith("otsk_")
        ? (isWellFormedSecret(credential) ? verifyKey(credential) : Effect.fail(rejected()))
        : verifySession(credential),
    forget: (hash) => keyCache.delete(hash.toString("hex")),
    recordUseNow: (keyId) => lastUsed.flushKey(keyId)
  })
})

/** Authenticates credentials. */
export class CredentialVerifier extends Context.Service<CredentialVerifier, CredentialVerifierService>()("CredentialVerifier") {
  /** The verifier over the key and member lookups (KeyCredentials, MemberRoles) and the session trust keys. */
  static readonly layer = Layer.effect(CredentialVerifier, make)
}
