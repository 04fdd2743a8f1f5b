/**
 * Console session tokens: JWTs (EdDSA, ES256 or RS256) verified against the console's trust keys, from
 * `CONSOLE_JWKS_URL` (fetched, cached, refetched when a token names an unknown `kid` or the copy is ten minutes
 * old) or `CONSOLE_JWKS_FILE`, with the configured issuer and audience. Every credential that is not an API key
 * comes here, whatever its shape. Fails closed: no trust keys configured is `503 auth_not_configured` for any token;
 * keys unreachable with none cached (or none holding the token's `kid`) is `503 trust_keys_unavailable`. A token
 * that does not verify, or lasts more than 24 hours from its `iat` (from now without one), or was issued more than a
 * minute in the future, is `401 invalid_credential`; one that is not even JWT-shaped (three base64url segments) is
 * refused as such without loading the keys, since no key could verify it.
 */
import { Context, Effect, Layer, Option } from "effect"
import { createLocalJWKSet, errors, jwtVerify, type JSONWebKeySet } from "jose"
import { readFile } from "node:fs/promises"
import { AuthNotConfigured, InvalidCredential, TrustKeysUnavailable } from "../../schema/Errors.js"
import { AppConfig } from "../config/AppConfig.js"

/** The claims a session carries that the service reads. */
export interface SessionClaims {
  readonly userId: string
  readonly organizationId: Option.Option<string>
}

/** The session verifier's operation. */
export interface SessionKeysService {
  /** Verifies a session token against the console's trust keys; its claims, or why it does not authenticate. */
  readonly verify: (token: string) => Effect.Effect<SessionClaims, InvalidCredential | AuthNotConfigured | TrustKeysUnavailable>
}

const JwtShape = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/
const MaxAgeMs = 10 * 60_000
const RefetchCooldownMs = 1_000
const FetchTimeoutMs = 3_000

const invalid = () => new InvalidCredential({ message: "the credential is neither an API key nor a valid session token" })
const unavailable = () => new TrustKeysUnavailable({ message: "the console's trust keys cannot be fetched" })

/** Where the trust keys are read from. */
interface Source {
  readonly kind: "url" | "file"
  readonly location: string
}

type LocalKeys = ReturnType<typeof createLocalJWKSet>

/** What a token's claims must hold. */
type ClaimRules = Parameters<typeof jwtVerify>[2]

const load = async (source: Source): Promise<JSONWebKeySet> => {
  if (source.kind === "file") return JSON.parse(await readFile(source.location, "utf8")) as JSONWebKeySet
  const response = await fetch(source.location, { signal: AbortSignal.timeout(FetchTimeoutMs) })
  if (!response.ok) throw new Error(`JWKS answered ${response.status}`)
  return (await response.json()) as JSONWebKeySet
}

/** The trust keys of a source: loaded on first use, refetched when ten minutes old (the old copy kept on failure). */
const trustKeys = (source: Source) => {
  let cached: { readonly keys: LocalKeys; readonly at: number } | undefined
  let lastAttempt = 0

  const refresh = Effect.tryPromise({
    try: async () => {
      lastAttempt = Date.now()
      const keys = await load(source)
      if (!Array.isArray(keys.keys)) throw new Error("JWKS has no keys array")
      cached = { keys: createLocalJWKSet(keys), at: Date.now() }
      return cached
    },
    catch: (cause) => cause
  }).pipe(Effect.tapError((cause) => Effect.logWarning("trust keys unavailable", cause)))

  const current = Effect.suspend(() => {
    if (cached === undefined) return Effect.mapError(refresh, unavailable)
    if (Date.now() - cached.at > MaxAgeMs && Date.now() - lastAttempt > RefetchCooldownMs) {
      const stale = cached
      return Effect.orElseSucceed(refresh, () => stale)
    }
    return Effect.succeed(cached)
  })

  /** Whether a fetch was attempted within the cool-down (an unknown `kid` then refetches nothing). */
  const triedJustNow = () => Date.now() - lastAttempt <= RefetchCooldownMs

  return { refresh, current, triedJustNow }
}

/** The longest a session may last: `exp` at most this long after `iat` (or after now when it has none). */
export const MaxSessionSeconds = 24 * 60 * 60

/** How far in the future an `iat` may be (the console's clock running ahead of ours). */
export const IssuedAtSkewSeconds = 60

/**
 * Whether a verified token's lifetime is acceptable (decisions.md, Keys): `exp` present (jose checks it has not
 * passed), at most `MaxSessionSeconds` after `iat`, or after now when `iat` is absent; an `iat` more than
 * `IssuedAtSkewSeconds` in the future is refused.
 */
export const acceptableLifetime = (claims: { readonly exp?: unknown; readonly iat?: unknown }, nowSeconds: number): boolean => {
  if (typeof claims.exp !== "number" || !Number.isFinite(claims.exp)) return false
  if (claims.iat !== undefined && (typeof claims.iat !== "number" || !Number.isFinite(claims.iat))) return false
  const issuedAt = claims.iat as number | undefined
  if (issuedAt !== undefined && issuedAt > nowSeconds + IssuedAtSkewSeconds) return false
  return claims.exp - (issuedAt ?? nowSeconds) <= MaxSessionSeconds
}

const check = (token: string, keys: LocalKeys, rules: ClaimRules) =>
  Effect.tryPromise({
    try: () => jwtVerify(token, keys, rules),
    catch: (cause) => cause
  })

/** Verifies a token against the trust keys, refetching them once when it names a key they do not hold. */
const verifyAgainst = (keys: ReturnType<typeof trustKeys>, rules: ClaimRules) => (token: string) =>
  Effect.gen(function*() {
    if (!JwtShape.test(token)) return yield* invalid()
    const current = yield* keys.current
    const result = yield* check(token, current.keys, rules).pipe(
      Effect.catchIf((cause) => cause instanceof errors.JWKSNoMatchingKey, () =>
        keys.triedJustNow()
          ? Effect.fail(invalid())
          : keys.refresh.pipe(
            Effect.mapError(unavailable),
            Effect.flatMap((fresh) => check(token, fresh.keys, rules))
          )),
      Effect.mapError((cause) => cause instanceof TrustKeysUnavailable ? cause : invalid())
    )
    if (!acceptableLifetime(result.payload, Math.floor(Date.now() / 1000))) return yield* invalid()
    const orgId = result.payload["org_id"]
    return {
      userId: result.payload.sub!,
      organizationId: typeof orgId === "string" && orgId !== "" ? Option.some(orgId) : Option.none()
    }
  })

const make = Effect.gen(function*() {
  const config = yield* AppConfig
  const source: Source | undefined = Option.isSome(config.consoleJwksUrl)
    ? { kind: "url", location: config.consoleJwksUrl.value }
    : Option.isSome(config.consoleJwksFile)
    ? { kind: "file", location: config.consoleJwksFile.value }
    : undefined
  const rules: ClaimRules = {
    issuer: Option.getOrElse(config.consoleJwtIssuer, () => ""),
    audience: Option.getOrElse(config.consoleJwtAudience, () => ""),
    algorithms: ["EdDSA", "ES256", "RS256"],
    requiredClaims: ["exp", "sub"]
  }
  const verify: SessionKeysService["verify"] = source === undefined
    ? () =>
      Effect.fail(new AuthNotConfigured({
        message: "the credential is not an API key, and console sessions are not configured on this service"
      }))
    : verifyAgainst(trustKeys(source), rules)
  return SessionKeys.of({ verify })
})

/** Verification of console session tokens. */
export class SessionKeys extends Context.Service<SessionKeys, SessionKeysService>()("SessionKeys") {
  /** Trust keys as configured. */
  static readonly layer = Layer.effect(SessionKeys, make)
}
