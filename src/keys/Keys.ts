/**
 * API keys: issue, list, read, revoke (idempotent) and rotate. Scopes are frozen at creation, deduplicated and
 * sorted, and never exceed what the creator holds; a key acting as a service account needs `members_write` besides
 * `keys_write`; a user key acts as its creator. A key with limits neither creates a key nor sets limits looser than
 * its own (`limits_exceed_creator`). A revocation or rotation takes effect at once on this process.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { ActorShape, Principal } from "../../schema/Auth.js"
import {
  type DatabaseUnavailable,
  EmptyScopes,
  KeyNotFound,
  KeyRevoked,
  LimitsExceedCreator,
  PrincipalIsNotTheCaller,
  ScopeDenied,
  ScopeExceedsCreator
} from "../../schema/Errors.js"
import { formatTimestamp, KeyIdPattern } from "../../schema/Ids.js"
import type { Scope } from "../../schema/Scope.js"
import { CredentialVerifier, type CredentialVerifierService } from "../auth/CredentialVerifier.js"
import { newSecret, secretHash, secretPrefix } from "../auth/KeySecrets.js"
import { newKeyId } from "../ids/Ids.js"
import { type KeyLimits, type KeyPeriod, NoLimits, periodStart } from "../ledger/KeyAccounts.js"
import { type KeyAccountRow, type KeyRow, KeysRepo, type KeysRepoService } from "./KeysRepo.js"

/** A key as the API shows it. */
export interface KeyView {
  readonly id: string
  readonly name: string
  readonly principal: Principal
  readonly scopes: ReadonlyArray<Scope>
  readonly state: "active" | "revoked"
  readonly secret_prefix: string
  readonly created_by: string
  readonly created_at: string
  readonly last_used_at: string | null
  readonly revoked_at: string | null
  readonly limits: LimitsView
  readonly usage: UsageView
}

/** A key's limits on the wire. */
export interface LimitsView {
  readonly spend_micros: number | null
  readonly tokens: number | null
  readonly runs_per_minute: number | null
  readonly period: KeyPeriod
}

/** A key's usage in its current period on the wire; a remaining figure is null where its limit is. */
export interface UsageView {
  readonly period_start_at: string
  readonly spend_settled_micros: number
  readonly spend_reserved_micros: number
  readonly spend_remaining_micros: number | null
  readonly tokens_settled: number
  readonly tokens_reserved: number
  readonly tokens_remaining: number | null
}

/** Limits as a request sets them: a field left out keeps its value, null clears it. */
export interface LimitsPatch {
  readonly spend_micros?: number | null | undefined
  readonly tokens?: number | null | undefined
  readonly runs_per_minute?: number | null | undefined
  readonly period?: KeyPeriod | undefined
}

const limitsOf = (row: KeyAccountRow): KeyLimits => ({
  spendMicros: row.spend_limit,
  tokens: row.token_limit,
  runsPerMinute: row.runs_per_minute,
  period: row.period ?? NoLimits.period
})

/** A patch applied to limits (JSON merge-patch: absent keeps, null clears). */
const patched = (limits: KeyLimits, patch: LimitsPatch | undefined): KeyLimits => ({
  spendMicros: patch?.spend_micros === undefined ? limits.spendMicros : patch.spend_micros,
  tokens: patch?.tokens === undefined ? limits.tokens : patch.tokens,
  runsPerMinute: patch?.runs_per_minute === undefined ? limits.runsPerMinute : patch.runs_per_minute,
  period: patch?.period ?? limits.period
})

/** What is left under a limit (never below zero: a limit lowered under the usage leaves nothing). */
const remaining = (limit: number | null, used: number): number | null => limit === null ? null : Math.max(0, limit - used)

const usageView = (row: KeyAccountRow, limits: KeyLimits): UsageView => {
  const settledSpend = row.spend_settled ?? 0
  const heldSpend = row.spend_held ?? 0
  const settledTokens = row.tokens_settled ?? 0
  const heldTokens = row.tokens_held ?? 0
  return {
    period_start_at: formatTimestamp(row.period_start ?? periodStart(limits.period, row.created_at)),
    spend_settled_micros: settledSpend,
    spend_reserved_micros: heldSpend,
    spend_remaining_micros: remaining(limits.spendMicros, settledSpend + heldSpend),
    tokens_settled: settledTokens,
    tokens_reserved: heldTokens,
    tokens_remaining: remaining(limits.tokens, settledTokens + heldTokens)
  }
}

/** The wire view of a stored key with its limits and usage. */
export const keyView = (row: KeyAccountRow): KeyView => {
  const limits = limitsOf(row)
  return {
    ...baseView(row),
    limits: {
      spend_micros: limits.spendMicros,
      tokens: limits.tokens,
      runs_per_minute: limits.runsPerMinute,
      period: limits.period
    },
    usage: usageView(row, limits)
  }
}

const baseView = (row: KeyRow) => ({
  id: row.id,
  name: row.name,
  principal: { type: row.principal_type, id: row.principal_id },
  scopes: row.scopes,
  state: row.state,
  secret_prefix: row.secret_prefix,
  created_by: row.created_by,
  created_at: formatTimestamp(row.created_at),
  last_used_at: row.last_used_at === null ? null : formatTimestamp(row.last_used_at),
  revoked_at: row.revoked_at === null ? null : formatTimestamp(row.revoked_at)
})

/** What `POST /v1/keys` asks for. */
export interface KeyRequest {
  readonly name: string
  readonly scopes: ReadonlyArray<Scope>
  readonly principal?: Principal | undefined
  readonly limits?: LimitsPatch | undefined
}

/** A key with its secret, shown once: on creation and rotation. */
export type IssuedKey = KeyView & { readonly secret: string }

/** A key to issue with no caller's rules applied (operator tools, organization set-up). */
export interface KeyIssue {
  readonly organizationId: string
  readonly name: string
  readonly principal: Principal
  readonly scopes: ReadonlyArray<Scope>
  readonly createdBy: string
  readonly limits?: KeyLimits | undefined
}

/** The keys service's operations. */
export interface KeysService {
  /** Creates a key with a fresh secret (operator tools and organization set-up call this directly). */
  readonly issue: (input: KeyIssue) => Effect.Effect<IssuedKey, DatabaseUnavailable>
  /** Creates a key for the caller under the contract's rules. */
  readonly create: (
    actor: ActorShape,
    request: KeyRequest
  ) => Effect.Effect<
    IssuedKey,
    EmptyScopes | ScopeDenied | PrincipalIsNotTheCaller | ScopeExceedsCreator | LimitsExceedCreator | DatabaseUnavailable
  >
  /** Every key of the organization, newest first. */
  readonly list: (organizationId: string) => Effect.Effect<ReadonlyArray<KeyView>, DatabaseUnavailable>
  /** One key of the organization. */
  readonly get: (organizationId: string, keyId: string) => Effect.Effect<KeyView, KeyNotFound | DatabaseUnavailable>
  /** Revokes a key for a caller holding every scope of it (`revokeAsOperator` skips that rule). */
  readonly revoke: (actor: ActorShape, keyId: string) => Effect.Effect<KeyView, KeyNotFound | ScopeDenied | DatabaseUnavailable>
  /** Revokes a key on an operator's authority (the CLI); revoking a revoked key returns it unchanged. */
  readonly revokeAsOperator: (organizationId: string, keyId: string) => Effect.Effect<KeyView, KeyNotFound | DatabaseUnavailable>
  /** Changes the limits of an active key of a caller holding every scope of it; returns the key with its usage. */
  readonly update: (
    actor: ActorShape,
    keyId: string,
    limits: LimitsPatch
  ) => Effect.Effect<KeyView, KeyNotFound | ScopeDenied | KeyRevoked | LimitsExceedCreator | DatabaseUnavailable>
  /** Issues a new secret for an active key of a caller holding every scope of it; the previous one stops at once. */
  readonly rotate: (
    actor: ActorShape,
    keyId: string
  ) => Effect.Effect<IssuedKey, KeyNotFound | ScopeDenied | KeyRevoked | DatabaseUnavailable>
}

const notFound = (keyId: string) => new KeyNotFound({ message: `no key ${keyId} in this organization` })

/**
 * A caller may rotate or revoke only a key whose scopes are all its own (docs/decisions.md, Keys): otherwise a
 * `keys_write` key could take over a wider key (a rotation hands out its secret) or cut off the owner's.
 */
const checkContained = (
  actor: ActorShape,
  row: KeyRow,
  action = "rotated or revoked"
): Effect.Effect<void, ScopeDenied> => {
  const missing = row.scopes.find((scope) => !actor.scopes.has(scope))
  return missing === undefined
    ? Effect.void
    : Effect.fail(new ScopeDenied({
      message: `the credential lacks the ${missing} scope, which key ${row.id} holds: a key can only be ${action} ` +
        "by a credential holding every scope of it"
    }))
}

/** Creates a key with a fresh secret and no caller's rules applied. */
const issueWith = (repo: KeysRepoService) => (input: KeyIssue) =>
  Effect.gen(function*() {
    const secret = newSecret()
    const limits = input.limits ?? NoLimits
    const row = yield* repo.insert({
      id: newKeyId(),
      organizationId: input.organizationId,
      name: input.name,
      principal: input.principal,
      scopes: [...new Set(input.scopes)].sort(),
      secretHash: secretHash(secret),
      secretPrefix: secretPrefix(secret),
      createdBy: input.createdBy,
      limits,
      periodStart: periodStart(limits.period, new Date())
    })
    return { ...keyView(row), secret }
  })

/** One key of an organization, or `key_not_found` (a malformed id is one no organization has). */
const findWith = (repo: KeysRepoService) => (organizationId: string, keyId: string) =>
  KeyIdPattern.test(keyId)
    ? Effect.flatMap(repo.get(organizationId, keyId), Option.match({
      onNone: () => Effect.fail(notFound(keyId)),
      onSome: (row) => Effect.succeed(row)
    }))
    : Effect.fail(notFound(keyId))

/** Revokes a key after writing its pending use, then forgets its cached verification. */
const revokeWith = (repo: KeysRepoService, verifier: CredentialVerifierService) => (current: KeyRow) =>
  Effect.gen(function*() {
    yield* verifier.recordUseNow(current.id)
    const revoked = yield* repo.revoke(current.organization_id, current.id)
    if (Option.isNone(revoked)) return yield* notFound(current.id)
    yield* repo.hashOf(current.id).pipe(Effect.map(Option.map(verifier.forget)))
    return keyView(revoked.value)
  })

/** The contract's rules for a caller creating a key: the principal it will act as, or why not. */
const principalFor = (
  actor: ActorShape,
  request: KeyRequest
): Effect.Effect<Principal, EmptyScopes | ScopeDenied | PrincipalIsNotTheCaller | ScopeExceedsCreator> => {
  if (request.scopes.length === 0) return Effect.fail(new EmptyScopes({ message: "a key needs at least one scope" }))
  const principal = request.principal ?? actor.principal
  if (principal.type === "service_account" && !actor.scopes.has("members_write")) {
    return Effect.fail(new ScopeDenied({
      message: "the credential lacks the members_write scope, needed for a service-account key"
    }))
  }
  if (principal.type === "user" && !(actor.principal.type === "user" && actor.principal.id === principal.id)) {
    return Effect.fail(new PrincipalIsNotTheCaller({ message: "a user key can only act as its creator" }))
  }
  const exceeding = request.scopes.find((scope) => !actor.scopes.has(scope))
  if (exceeding !== undefined) {
    return Effect.fail(new ScopeExceedsCreator({ message: `the creator does not hold the ${exceeding} scope` }))
  }
  return Effect.succeed(principal)
}

const revoked = (keyId: string) => new KeyRevoked({ message: `key ${keyId} is revoked` })

/** The limits compared by containment, by wire name. */
const Bounded = [
  ["spend_micros", "spendMicros"],
  ["tokens", "tokens"],
  ["runs_per_minute", "runsPerMinute"]
] as const

/**
 * The first way `limits` are looser than the creator's (decisions.md, Extensions, "Limit containment"), in words
 * naming the limit, or undefined when they are contained: each limit the creator has must be matched by one no larger
 * (null is none, so larger than any); while the creator has a spend or token limit, which counts over its period, a
 * period other than the creator's is looser.
 */
export const looserThan = (creator: KeyLimits, limits: KeyLimits): string | undefined => {
  for (const [name, field] of Bounded) {
    const own = creator[field]
    const asked = limits[field]
    if (own === null || (asked !== null && asked <= own)) continue
    return `${name} ${asked === null ? "none" : asked} is looser than the creating key's ${name} ${own}`
  }
  const counted = creator.spendMicros !== null || creator.tokens !== null
  if (counted && limits.period !== creator.period) {
    return `period ${limits.period} is looser than the creating key's period ${creator.period}`
  }
  return undefined
}

/**
 * Refuses limits looser than the calling key's own with `limits_exceed_creator` naming the limit; console sessions
 * and keys without limits are not bound. The caller's limits are read as stored now.
 */
const checkLimitsContained = (find: ReturnType<typeof findWith>) => (actor: ActorShape, limits: KeyLimits) => {
  if (actor.credential.kind !== "api_key") return Effect.void
  return Effect.flatMap(
    Effect.catchTag(find(actor.organizationId, actor.credential.keyId), "key_not_found", () => Effect.succeed(undefined)),
    (caller): Effect.Effect<void, LimitsExceedCreator> => {
      if (caller === undefined) return Effect.void
      const looser = looserThan(limitsOf(caller), limits)
      return looser === undefined ? Effect.void : Effect.fail(new LimitsExceedCreator({ message: looser }))
    }
  )
}

const make = Effect.gen(function*() {
  const repo = yield* KeysRepo
  const verifier = yield* CredentialVerifier
  const issue = issueWith(repo)
  const find = findWith(repo)
  const revokeRow = revokeWith(repo, verifier)
  const contained = checkLimitsContained(find)

  return Keys.of({
    issue,
    create: (actor, request) =>
      Effect.gen(function*() {
        const principal = yield* principalFor(actor, request)
        const limits = patched(NoLimits, request.limits)
        yield* contained(actor, limits)
        return yield* issue({
          organizationId: actor.organizationId,
          name: request.name,
          principal,
          scopes: request.scopes,
          createdBy: actor.principal.id,
          limits
        })
      }),
    list: (organizationId) => Effect.map(repo.list(organizationId), (rows) => rows.map(keyView)),
    get: (organizationId, keyId) => Effect.map(find(organizationId, keyId), keyView),
    revoke: (actor, keyId) =>
      Effect.gen(function*() {
        const current = yield* find(actor.organizationId, keyId)
        yield* checkContained(actor, current)
        return yield* revokeRow(current)
      }),
    revokeAsOperator: (organizationId, keyId) => Effect.flatMap(find(organizationId, keyId), revokeRow),
    update: (actor, keyId, patch) =>
      Effect.gen(function*() {
        const current = yield* find(actor.organizationId, keyId)
        yield* checkContained(actor, current, "changed")
        if (current.state === "revoked") return yield* revoked(keyId)
        const limits = patched(limitsOf(current), patch)
        yield* contained(actor, limits)
        const changed = yield* repo.setLimits(actor.organizationId, keyId, limits)
        if (Option.isNone(changed)) return yield* revoked(keyId)
        return keyView(yield* find(actor.organizationId, keyId))
      }),
    rotate: (actor, keyId) =>
      Effect.gen(function*() {
        const current = yield* find(actor.organizationId, keyId)
        yield* checkContained(actor, current)
        const secret = newSecret()
        const rotated = yield* repo.rotate(actor.organizationId, keyId, secretHash(secret), secretPrefix(secret))
        if (Option.isNone(rotated)) return yield* revoked(keyId)
        verifier.forget(rotated.value.previous_hash)
        return { ...keyView(rotated.value), secret }
      })
  })
})

/** The keys service. */
export class Keys extends Context.Service<Keys, KeysService>()("Keys") {
  /** Keys over their repository and the credential verifier. */
  static readonly layer = Layer.effect(Keys, make)
}
