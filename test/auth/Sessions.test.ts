/**
 * Console session tokens, signed by a test key served as a real JWKS over HTTP: a valid session acts with its
 * role's scopes; expiry, wrong issuer or audience, a bad signature are `401 invalid_credential`; an unknown `kid` is
 * refetched; a session without `org_id` is `403 no_active_organization`; trust keys unreachable with none cached is
 * `503 trust_keys_unavailable`, while cached keys keep working; no trust keys configured is `503 auth_not_configured`.
 * Anything that is not an API key (`otsk_` + 64 lowercase hex) is a session token, whatever its shape: `401
 * invalid_credential` when it does not verify, `503 auth_not_configured` while no trust keys are configured.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call, codeOf } from "../support/Api.js"
import { FakeConsole } from "../support/FakeConsole.js"
import { seedMember, seedOrganization } from "../support/Seed.js"
import { TestServerLive, TestServerWithConsoleLive } from "../support/TestServer.js"

/** Malformed API keys: `otsk_` but not followed by exactly 64 lowercase hex (spec: "key malformed" is 401). */
const MalformedKeys = [
  "otsk_short",
  `otsk_${"A".repeat(64)}`,
  `otsk_${"0".repeat(63)}`,
  `otsk_${"0".repeat(65)}`
]

/** Credentials that are not API keys at all, and not JWT-shaped either: console session tokens by the spec. */
const NotKeysNorJwts = [
  "foo",
  "not-a-credential",
  "a.b",
  "a.b.c.d",
  "Zm9vOmJhcg==",
  "two words"
]

const NotApiKeys = [...MalformedKeys, ...NotKeysNorJwts]

const sessionFor = (role: string, claims: Record<string, unknown> = {}, options = {}) =>
  Effect.gen(function*() {
    const console = yield* FakeConsole
    const organization = yield* seedOrganization()
    const userId = `user_${role}_${Math.random().toString(16).slice(2)}`
    yield* seedMember(organization.organizationId, userId, role)
    const token = yield* console.sign({ sub: userId, org_id: organization.organizationId, ...claims }, options)
    return { organization, userId, token }
  })

layer(TestServerWithConsoleLive(), { excludeTestServices: true, timeout: "120 seconds" })("console sessions", (it) => {
  describe("a valid session", () => {
    it.effect("acts in its organization with its role's scopes, as its user", () =>
      Effect.gen(function*() {
        const { organization, token, userId } = yield* sessionFor("member")
        const list = yield* call("GET", "/v1/keys", { secret: token })
        assert.strictEqual(list.status, 200)
        assert.strictEqual(list.json().keys[0].id, organization.ownerKeyId)
        const created = yield* call("POST", "/v1/keys", { secret: token, body: { name: "mine", scopes: ["runs_read"] } })
        assert.strictEqual(created.status, 201)
        assert.deepStrictEqual(created.json().principal, { type: "user", id: userId })
        const beyond = yield* call("POST", "/v1/keys", { secret: token, body: { name: "x", scopes: ["billing_write"] } })
        assert.strictEqual(codeOf(beyond), "scope_exceeds_creator")
      }))

    it.effect("a member session cannot rotate or revoke the owner's key (403 scope_denied), but its own key yes", () =>
      Effect.gen(function*() {
        const { organization, token } = yield* sessionFor("member")
        const rotate = yield* call("POST", `/v1/keys/${organization.ownerKeyId}/rotate`, { secret: token })
        assert.strictEqual(rotate.status, 403)
        assert.strictEqual(codeOf(rotate), "scope_denied")
        const revoke = yield* call("DELETE", `/v1/keys/${organization.ownerKeyId}`, { secret: token })
        assert.strictEqual(revoke.status, 403)
        assert.strictEqual(codeOf(revoke), "scope_denied")
        assert.strictEqual((yield* call("GET", "/v1/keys", { secret: organization.secret })).status, 200)
        const own = yield* call("POST", "/v1/keys", { secret: token, body: { name: "mine", scopes: ["runs_read"] } })
        const rotated = yield* call("POST", `/v1/keys/${own.json().id}/rotate`, { secret: token })
        assert.strictEqual(rotated.status, 200)
      }))

    it.effect("ES256 and RS256 keys are trusted too, once the JWKS lists them (an unknown kid is refetched)", () =>
      Effect.gen(function*() {
        const console = yield* FakeConsole
        const { token: warm } = yield* sessionFor("viewer")
        assert.strictEqual((yield* call("GET", "/v1/keys", { secret: warm })).status, 200)
        yield* console.addKey("k-es", "ES256", false)
        yield* console.addKey("k-rs", "RS256", false)
        yield* console.publishAll
        yield* Effect.sleep("1100 millis")
        const fetchesBefore = console.fetches()
        for (const kid of ["k-es", "k-rs"]) {
          const { token } = yield* sessionFor("viewer", {}, { kid })
          const response = yield* call("GET", "/v1/keys", { secret: token })
          assert.strictEqual(response.status, 200, kid)
          yield* Effect.sleep("1100 millis")
        }
        assert.isAbove(console.fetches(), fetchesBefore, "the JWKS was fetched again for the unknown kid")
      }))
  })

  describe("401 invalid_credential", () => {
    it.effect("expired, wrong issuer, wrong audience, unpublished key, tampered signature", () =>
      Effect.gen(function*() {
        const console = yield* FakeConsole
        const expired = yield* sessionFor("owner", {}, { expiresIn: Math.floor(Date.now() / 1000) - 60 })
        const issuer = yield* sessionFor("owner", {}, { issuer: "https://elsewhere.example" })
        const audience = yield* sessionFor("owner", {}, { audience: "another-api" })
        yield* console.addKey("k-hidden", "EdDSA", false)
        const unpublished = yield* sessionFor("owner", {}, { kid: "k-hidden" })
        const valid = yield* sessionFor("owner")
        const [header, payload, signature] = valid.token.split(".")
        const tampered = `${header}.${payload}.${signature!.slice(0, -4)}AAAA`
        for (const [name, token] of [["expired", expired.token], ["issuer", issuer.token], ["audience", audience.token], ["unpublished kid", unpublished.token], ["tampered", tampered]] as const) {
          const response = yield* call("GET", "/v1/keys", { secret: token! })
          assert.strictEqual(response.status, 401, name)
          assert.strictEqual(codeOf(response), "invalid_credential", name)
          assert.isUndefined(response.headers["www-authenticate"])
        }
      }))
  })

  describe("a session's lifetime (decisions.md, Keys)", () => {
    const now = () => Math.floor(Date.now() / 1000)
    const Day = 24 * 60 * 60

    it.effect("exp more than 24 h after iat (or after now without iat), or iat more than 60 s ahead, is 401 invalid_credential", () =>
      Effect.gen(function*() {
        const refused: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
          ["exp ten years ahead", { expiresIn: now() + 10 * 365 * Day }],
          ["exp 24 h and a minute after iat", { issuedAt: now(), expiresIn: now() + Day + 60 }],
          ["exp 25 h after an iat an hour ago", { issuedAt: now() - 3_600, expiresIn: now() + Day }],
          ["no iat, exp 25 h ahead", { issuedAt: null, expiresIn: now() + Day + 3_600 }],
          ["iat two minutes ahead", { issuedAt: now() + 120, expiresIn: now() + 600 }],
          ["iat a year ahead", { issuedAt: now() + 365 * Day, expiresIn: now() + 365 * Day + 60 }]
        ]
        for (const [name, options] of refused) {
          const { token } = yield* sessionFor("owner", {}, options)
          const response = yield* call("GET", "/v1/keys", { secret: token })
          assert.strictEqual(response.status, 401, `${name}: ${response.text}`)
          assert.strictEqual(codeOf(response), "invalid_credential", name)
        }
      }))

    it.effect("exp within 24 h of iat (or of now), and an iat less than 60 s ahead, are accepted", () =>
      Effect.gen(function*() {
        const accepted: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
          ["exp 23 h after iat", { issuedAt: now(), expiresIn: now() + 23 * 3_600 }],
          ["no iat, exp 23 h ahead", { issuedAt: null, expiresIn: now() + 23 * 3_600 }],
          ["iat 30 s ahead", { issuedAt: now() + 30, expiresIn: now() + 600 }]
        ]
        for (const [name, options] of accepted) {
          const { token } = yield* sessionFor("owner", {}, options)
          const response = yield* call("GET", "/v1/keys", { secret: token })
          assert.strictEqual(response.status, 200, `${name}: ${response.text}`)
        }
      }))
  })

  describe("anything that is not an API key is a session token", () => {
    it.effect("401 invalid_credential when it does not verify, whatever its shape; a non-JWT is refused without fetching the keys", () =>
      Effect.gen(function*() {
        const console = yield* FakeConsole
        const { organization } = yield* sessionFor("owner")
        assert.strictEqual((yield* call("GET", "/v1/keys", { secret: organization.secret })).status, 200, "an API key")
        const fetchesBefore = console.fetches()
        for (const token of NotApiKeys) {
          const response = yield* call("GET", "/v1/keys", { secret: token })
          assert.strictEqual(response.status, 401, token)
          assert.strictEqual(codeOf(response), "invalid_credential", token)
          assert.isUndefined(response.headers["www-authenticate"], token)
        }
        assert.strictEqual(console.fetches(), fetchesBefore, "no token of these shapes makes the service fetch the trust keys")
        const jwtLike = yield* call("GET", "/v1/keys", { secret: "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ1In0.c2ln" })
        assert.strictEqual(jwtLike.status, 401)
        assert.strictEqual(codeOf(jwtLike), "invalid_credential")
      }))
  })

  describe("403", () => {
    it.effect("no_active_organization without org_id; scope_denied for a role outside the table or a non-member", () =>
      Effect.gen(function*() {
        const console = yield* FakeConsole
        const noOrg = yield* console.sign({ sub: "user_x" })
        const response = yield* call("GET", "/v1/keys", { secret: noOrg })
        assert.strictEqual(response.status, 403)
        assert.strictEqual(codeOf(response), "no_active_organization")
        const outside = yield* sessionFor("auditor")
        const denied = yield* call("GET", "/v1/keys", { secret: outside.token })
        assert.strictEqual(denied.status, 403)
        assert.strictEqual(codeOf(denied), "scope_denied")
        const organization = yield* seedOrganization()
        const stranger = yield* console.sign({ sub: "user_stranger", org_id: organization.organizationId })
        const strangerResponse = yield* call("GET", "/v1/keys", { secret: stranger })
        assert.strictEqual(codeOf(strangerResponse), "scope_denied")
      }))
  })

  describe("503 trust_keys_unavailable", () => {
    it.effect("cached keys keep working while the JWKS is down; an unknown kid then cannot be decided", () =>
      Effect.gen(function*() {
        const console = yield* FakeConsole
        const cached = yield* sessionFor("viewer")
        assert.strictEqual((yield* call("GET", "/v1/keys", { secret: cached.token })).status, 200)
        yield* console.setDown(true)
        yield* console.addKey("k-new", "EdDSA", true)
        yield* Effect.sleep("1100 millis")
        const stillCached = yield* call("GET", "/v1/keys", { secret: cached.token })
        assert.strictEqual(stillCached.status, 200)
        const unknown = yield* sessionFor("viewer", {}, { kid: "k-new" })
        const response = yield* call("GET", "/v1/keys", { secret: unknown.token })
        assert.strictEqual(response.status, 503)
        assert.strictEqual(codeOf(response), "trust_keys_unavailable")
        yield* console.setDown(false)
      }))
  })
})

layer(TestServerWithConsoleLive(), { excludeTestServices: true, timeout: "60 seconds" })("console sessions, JWKS down from the start", (it) => {
  it.effect("503 trust_keys_unavailable when the keys cannot be fetched and none are cached", () =>
    Effect.gen(function*() {
      const console = yield* FakeConsole
      yield* console.setDown(true)
      const { token } = yield* sessionFor("owner")
      const response = yield* call("GET", "/v1/keys", { secret: token })
      assert.strictEqual(response.status, 503)
      assert.strictEqual(codeOf(response), "trust_keys_unavailable")
      yield* console.setDown(false)
      const recovered = yield* call("GET", "/v1/keys", { secret: token })
      assert.strictEqual(recovered.status, 200)
    }))
})

layer(TestServerLive(), { excludeTestServices: true, timeout: "60 seconds" })("console sessions not configured", (it) => {
  it.effect("503 auth_not_configured for a session token; API keys still work", () =>
    Effect.gen(function*() {
      const organization = yield* seedOrganization()
      const jwtLike = "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ1In0.c2ln"
      const response = yield* call("GET", "/v1/keys", { secret: jwtLike })
      assert.strictEqual(response.status, 503)
      assert.strictEqual(codeOf(response), "auth_not_configured")
      assert.strictEqual((yield* call("GET", "/v1/keys", { secret: organization.secret })).status, 200)
    }))

  it.effect("503 auth_not_configured for anything that is not an API key, JWT-shaped or not; 401 for a malformed or unknown API key", () =>
    Effect.gen(function*() {
      for (const token of MalformedKeys) {
        const response = yield* call("GET", "/v1/keys", { secret: token })
        assert.strictEqual(response.status, 401, token)
        assert.strictEqual(codeOf(response), "invalid_credential", token)
      }
      for (const token of NotKeysNorJwts) {
        const response = yield* call("GET", "/v1/keys", { secret: token })
        assert.strictEqual(response.status, 503, token)
        assert.strictEqual(codeOf(response), "auth_not_configured", token)
        assert.include(response.json().error.message, "not an API key", token)
      }
      const unknownKey = yield* call("GET", "/v1/keys", { secret: `otsk_${"0".repeat(64)}` })
      assert.strictEqual(unknownKey.status, 401)
      assert.strictEqual(codeOf(unknownKey), "invalid_credential")
      const missing = yield* call("GET", "/v1/keys", { headers: { authorization: "Bearer   " } })
      assert.strictEqual(missing.status, 401)
      assert.strictEqual(codeOf(missing), "missing_credentials")
    }))
})
