/**
 * Bearer parsing, and the key cache's promise: a revocation or rotation made by one process takes effect at once
 * there and within a second on another process sharing the database.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { bearerToken } from "../../src/auth/Authenticate.js"
import { CredentialVerifier } from "../../src/auth/CredentialVerifier.js"
import { LastUsed } from "../../src/auth/LastUsed.js"
import { SessionKeys } from "../../src/auth/SessionKeys.js"
import { KeysRepo } from "../../src/keys/KeysRepo.js"
import { Keys } from "../../src/keys/Keys.js"
import { OrganizationsRepo } from "../../src/organizations/OrganizationsRepo.js"
import { seedKey, seedOrganization } from "../support/Seed.js"
import { TestServerLive } from "../support/TestServer.js"

describe("bearerToken", () => {
  it("reads the token of a Bearer header, the scheme in any case", () => {
    assert.strictEqual(bearerToken("Bearer abc"), "abc")
    assert.strictEqual(bearerToken("bearer abc"), "abc")
    assert.strictEqual(bearerToken("BEARER\tabc  "), "abc")
    assert.strictEqual(bearerToken("  Bearer   a b "), "a b")
  })

  it("has no token without a header, with another scheme or with an empty token", () => {
    for (const header of [undefined, "", "Bearer", "Bearer ", "Basic abc", "Bearerabc", "Token abc", "abc"]) {
      assert.isUndefined(bearerToken(header), String(header))
    }
  })
})

/** A second verifier over the same database, as another server process would have. */
const OtherProcessVerifier = Layer.fresh(
  CredentialVerifier.layer.pipe(
    Layer.provide([SessionKeys.layer, LastUsed.layer]),
    Layer.provide(Layer.mergeAll(KeysRepo.layer, OrganizationsRepo.layer))
  )
)

layer(TestServerLive(), { excludeTestServices: true, timeout: "60 seconds" })("key cache across processes", (it) => {
  it.effect("a revocation takes effect at once here and within a second on another process", () =>
    Effect.gen(function*() {
      const organization = yield* seedOrganization()
      const key = yield* seedKey(organization.organizationId, organization.ownerId, ["runs_read"])
      const here = yield* CredentialVerifier
      const other = yield* Effect.provide(CredentialVerifier, OtherProcessVerifier)
      assert.isTrue(Exit.isSuccess(yield* Effect.exit(here.verify(key.secret))))
      assert.isTrue(Exit.isSuccess(yield* Effect.exit(other.verify(key.secret))))
      const keys = yield* Keys
      yield* keys.revokeAsOperator(organization.organizationId, key.id)
      assert.isTrue(Exit.isFailure(yield* Effect.exit(here.verify(key.secret))), "at once on this process")
      yield* Effect.sleep("1100 millis")
      const later = yield* Effect.exit(other.verify(key.secret))
      assert.isTrue(Exit.isFailure(later), "within a second on the other")
    }))

  it.effect("a rotation: the old secret fails on both, the new one works on both", () =>
    Effect.gen(function*() {
      const organization = yield* seedOrganization()
      const key = yield* seedKey(organization.organizationId, organization.ownerId, ["runs_read"])
      const here = yield* CredentialVerifier
      const other = yield* Effect.provide(CredentialVerifier, OtherProcessVerifier)
      yield* other.verify(key.secret)
      const rotated = yield* (yield* Keys).rotate({
        organizationId: organization.organizationId,
        principal: { type: "user", id: organization.ownerId },
        scopes: new Set(["runs_read"]),
        credential: { kind: "session" }
      }, key.id)
      assert.isTrue(Exit.isFailure(yield* Effect.exit(here.verify(key.secret))))
      yield* Effect.sleep("1100 millis")
      assert.isTrue(Exit.isFailure(yield* Effect.exit(other.verify(key.secret))))
      assert.isTrue(Exit.isSuccess(yield* Effect.exit(other.verify(rotated.secret))))
      assert.isTrue(Exit.isSuccess(yield* Effect.exit(here.verify(rotated.secret))))
    }))
})
