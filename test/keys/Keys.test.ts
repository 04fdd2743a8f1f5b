/**
 * The keys routes: listing, reading, creating (the scope and principal rules), revoking and rotating, with what is
 * stored checked, secrets never shown twice, and organizations isolated from each other.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"
import { call, codeOf } from "../support/Api.js"
import { seedKey, seedOrganization } from "../support/Seed.js"
import { TestServerLive } from "../support/TestServer.js"

const KeyIdPattern = /^key_[0-9a-f]{32}$/
const SecretPattern = /^otsk_[0-9a-f]{64}$/
const TimestampPattern = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/

layer(TestServerLive(), { excludeTestServices: true, timeout: "120 seconds" })("keys", (it) => {
  describe("POST /v1/keys", () => {
    it.effect("201 with the secret shown once, scopes deduplicated and sorted, only the hash stored", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const response = yield* call("POST", "/v1/keys", {
          secret: organization.secret,
          body: { name: "deploy", scopes: ["runs_write", "keys_read", "runs_write", "runs_read"] }
        })
        assert.strictEqual(response.status, 201)
        const key = response.json()
        assert.match(key.id, KeyIdPattern)
        assert.match(key.secret, SecretPattern)
        assert.strictEqual(key.secret_prefix, key.secret.slice(0, 13))
        assert.deepStrictEqual(key.scopes, ["keys_read", "runs_read", "runs_write"])
        assert.deepStrictEqual(key.principal, { type: "user", id: organization.ownerId })
        assert.strictEqual(key.created_by, organization.ownerId)
        assert.strictEqual(key.state, "active")
        assert.match(key.created_at, TimestampPattern)
        assert.isNull(key.last_used_at)
        assert.isNull(key.revoked_at)
        const sql = yield* SqlClient.SqlClient
        const [stored] = yield* sql<{ secret_sha256: Buffer; row: string }>`
          SELECT secret_sha256, row_to_json(api_keys)::text AS row FROM api_keys WHERE id = ${key.id}`
        assert.strictEqual(stored!.secret_sha256.toString("hex"), createHash("sha256").update(key.secret).digest("hex"))
        assert.notInclude(stored!.row, key.secret.slice(5))
        const fresh = yield* call("GET", "/v1/keys", { secret: key.secret })
        assert.strictEqual(fresh.status, 200, "the new secret works")
      }))

    it.effect("400 empty_scopes; 422 for an unknown scope or field; 415 without a content type", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const empty = yield* call("POST", "/v1/keys", { secret: organization.secret, body: { name: "x", scopes: [] } })
        assert.strictEqual(empty.status, 400)
        assert.strictEqual(codeOf(empty), "empty_scopes")
        const unknown = yield* call("POST", "/v1/keys", { secret: organization.secret, body: { name: "x", scopes: ["root"] } })
        assert.strictEqual(unknown.status, 422)
        assert.isTrue(unknown.text.startsWith("Failed to deserialize the JSON body into the target type"))
        const extra = yield* call("POST", "/v1/keys", { secret: organization.secret, body: { name: "x", scopes: ["runs_read"], ttl: 3 } })
        assert.strictEqual(extra.status, 422)
        const malformed = yield* call("POST", "/v1/keys", { secret: organization.secret, rawBody: "{\"name\":" })
        assert.strictEqual(malformed.status, 400)
        assert.isTrue(malformed.text.startsWith("Failed to parse the request body as JSON"))
        const untyped = yield* call("POST", "/v1/keys", {
          secret: organization.secret,
          headers: { "content-type": "text/plain" },
          rawBody: "{}"
        })
        assert.strictEqual(untyped.status, 415)
        const sql = yield* SqlClient.SqlClient
        const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM api_keys WHERE organization_id = ${organization.organizationId}`
        assert.strictEqual(count!.n, 1, "nothing was stored")
      }))

    it.effect("403 scope_exceeds_creator naming the scope the creator lacks", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const creator = yield* seedKey(organization.organizationId, organization.ownerId, ["keys_write", "runs_read"])
        const response = yield* call("POST", "/v1/keys", {
          secret: creator.secret,
          body: { name: "x", scopes: ["runs_read", "billing_write"] }
        })
        assert.strictEqual(response.status, 403)
        assert.strictEqual(codeOf(response), "scope_exceeds_creator")
        assert.include(response.json().error.message, "billing_write")
        const within = yield* call("POST", "/v1/keys", { secret: creator.secret, body: { name: "x", scopes: ["runs_read"] } })
        assert.strictEqual(within.status, 201)
      }))

    it.effect("service accounts need members_write (403 scope_denied naming it); another user is principal_is_not_the_caller", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const writer = yield* seedKey(organization.organizationId, organization.ownerId, ["keys_write", "runs_read"])
        const denied = yield* call("POST", "/v1/keys", {
          secret: writer.secret,
          body: { name: "bot", scopes: ["runs_read"], principal: { type: "service_account", id: "deploy-bot" } }
        })
        assert.strictEqual(denied.status, 403)
        assert.strictEqual(codeOf(denied), "scope_denied")
        assert.include(denied.json().error.message, "members_write")
        const allowed = yield* call("POST", "/v1/keys", {
          secret: organization.secret,
          body: { name: "bot", scopes: ["runs_read"], principal: { type: "service_account", id: "deploy-bot" } }
        })
        assert.strictEqual(allowed.status, 201)
        assert.deepStrictEqual(allowed.json().principal, { type: "service_account", id: "deploy-bot" })
        const badId = yield* call("POST", "/v1/keys", {
          secret: organization.secret,
          body: { name: "bot", scopes: ["runs_read"], principal: { type: "service_account", id: "has space" } }
        })
        assert.strictEqual(badId.status, 422)
        const other = yield* call("POST", "/v1/keys", {
          secret: organization.secret,
          body: { name: "x", scopes: ["runs_read"], principal: { type: "user", id: "someone_else" } }
        })
        assert.strictEqual(other.status, 403)
        assert.strictEqual(codeOf(other), "principal_is_not_the_caller")
        const self = yield* call("POST", "/v1/keys", {
          secret: organization.secret,
          body: { name: "x", scopes: ["runs_read"], principal: { type: "user", id: organization.ownerId } }
        })
        assert.strictEqual(self.status, 201)
      }))
  })

  describe("GET /v1/keys", () => {
    it.effect("200 every key of the organization, newest first, never a secret", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const first = yield* seedKey(organization.organizationId, organization.ownerId, ["runs_read"], "first")
        const second = yield* seedKey(organization.organizationId, organization.ownerId, ["runs_read"], "second")
        const response = yield* call("GET", "/v1/keys", { secret: organization.secret })
        assert.strictEqual(response.status, 200)
        const { keys } = response.json()
        assert.deepStrictEqual(keys.map((key: any) => key.id), [second.id, first.id, organization.ownerKeyId])
        for (const key of keys) assert.notProperty(key, "secret")
        assert.notInclude(response.text, first.secret)
        assert.notInclude(response.text, organization.secret)
        const paged = yield* call("GET", "/v1/keys?limit=1", { secret: organization.secret })
        assert.strictEqual(paged.status, 400)
        assert.isTrue(paged.text.startsWith("Failed to deserialize query string"))
      }))
  })

  describe("GET /v1/keys/{key_id}", () => {
    it.effect("200 one key without its secret; 404 key_not_found for unknown, malformed and other organizations' ids", () =>
      Effect.gen(function*() {
        const mine = yield* seedOrganization()
        const theirs = yield* seedOrganization()
        const response = yield* call("GET", `/v1/keys/${mine.ownerKeyId}`, { secret: mine.secret })
        assert.strictEqual(response.status, 200)
        assert.strictEqual(response.json().id, mine.ownerKeyId)
        assert.notProperty(response.json(), "secret")
        const notFound = [
          `/v1/keys/${theirs.ownerKeyId}`,
          `/v1/keys/key_${"0".repeat(32)}`,
          "/v1/keys/not-a-key"
        ]
        const bodies: Array<string> = []
        for (const path of notFound) {
          const missing = yield* call("GET", path, { secret: mine.secret })
          assert.strictEqual(missing.status, 404, path)
          assert.strictEqual(codeOf(missing), "key_not_found", path)
          bodies.push(missing.json().error.message.replace(/key_\w+|not-a-key/, "ID"))
        }
        assert.strictEqual(new Set(bodies).size, 1, "another organization's key reads exactly like an unknown one")
        const crossDelete = yield* call("DELETE", `/v1/keys/${theirs.ownerKeyId}`, { secret: mine.secret })
        assert.strictEqual(crossDelete.status, 404)
        assert.strictEqual(codeOf(crossDelete), "key_not_found")
        const crossRotate = yield* call("POST", `/v1/keys/${theirs.ownerKeyId}/rotate`, { secret: mine.secret })
        assert.strictEqual(crossRotate.status, 404)
        assert.strictEqual(codeOf(crossRotate), "key_not_found")
        const stillWorks = yield* call("GET", "/v1/keys", { secret: theirs.secret })
        assert.strictEqual(stillWorks.status, 200)
      }))
  })

  describe("DELETE /v1/keys/{key_id}", () => {
    it.effect("200 the revoked key; idempotent; the key fails on the very next request", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const victim = yield* seedKey(organization.organizationId, organization.ownerId, ["keys_read"])
        const before = yield* call("GET", "/v1/keys", { secret: victim.secret })
        assert.strictEqual(before.status, 200)
        const revoked = yield* call("DELETE", `/v1/keys/${victim.id}`, { secret: organization.secret })
        assert.strictEqual(revoked.status, 200)
        const body = revoked.json()
        assert.strictEqual(body.state, "revoked")
        assert.match(body.revoked_at, TimestampPattern)
        assert.notProperty(body, "secret")
        const after = yield* call("GET", "/v1/keys", { secret: victim.secret })
        assert.strictEqual(after.status, 401)
        assert.strictEqual(codeOf(after), "invalid_credential")
        const again = yield* call("DELETE", `/v1/keys/${victim.id}`, { secret: organization.secret })
        assert.strictEqual(again.status, 200)
        assert.deepStrictEqual(again.json(), body)
      }))
  })

  describe("POST /v1/keys/{key_id}/rotate", () => {
    it.effect("200 a new secret; the old one fails at once; 409 key_revoked on a revoked key", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const key = yield* seedKey(organization.organizationId, organization.ownerId, ["keys_read"])
        yield* call("GET", "/v1/keys", { secret: key.secret })
        const rotated = yield* call("POST", `/v1/keys/${key.id}/rotate`, { secret: organization.secret })
        assert.strictEqual(rotated.status, 200)
        const body = rotated.json()
        assert.strictEqual(body.id, key.id)
        assert.match(body.secret, SecretPattern)
        assert.notStrictEqual(body.secret, key.secret)
        assert.strictEqual(body.secret_prefix, body.secret.slice(0, 13))
        const old = yield* call("GET", "/v1/keys", { secret: key.secret })
        assert.strictEqual(old.status, 401)
        assert.strictEqual(codeOf(old), "invalid_credential")
        const fresh = yield* call("GET", "/v1/keys", { secret: body.secret })
        assert.strictEqual(fresh.status, 200)
        yield* call("DELETE", `/v1/keys/${key.id}`, { secret: organization.secret })
        const conflict = yield* call("POST", `/v1/keys/${key.id}/rotate`, { secret: organization.secret })
        assert.strictEqual(conflict.status, 409)
        assert.strictEqual(codeOf(conflict), "key_revoked")
        const rotatedTwice = yield* call("GET", "/v1/keys", { secret: body.secret })
        assert.strictEqual(rotatedTwice.status, 401)
        assert.strictEqual(codeOf(rotatedTwice), "invalid_credential")
      }))

    it.effect("a key can rotate itself, after which only the new secret works", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const key = yield* seedKey(organization.organizationId, organization.ownerId, ["keys_read", "keys_write"])
        const rotated = yield* call("POST", `/v1/keys/${key.id}/rotate`, { secret: key.secret })
        assert.strictEqual(rotated.status, 200)
        assert.strictEqual((yield* call("GET", "/v1/keys", { secret: key.secret })).status, 401)
        assert.strictEqual((yield* call("GET", "/v1/keys", { secret: rotated.json().secret })).status, 200)
      }))
  })

  describe("rotate and revoke only keys within the caller's scopes", () => {
    it.effect("POST /v1/keys/{key_id}/rotate and DELETE > 403 scope_denied for a wider key; it keeps working", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const narrow = yield* seedKey(organization.organizationId, organization.ownerId, ["keys_write"])
        const rotate = yield* call("POST", `/v1/keys/${organization.ownerKeyId}/rotate`, { secret: narrow.secret })
        assert.strictEqual(rotate.status, 403)
        assert.strictEqual(codeOf(rotate), "scope_denied")
        assert.include(rotate.json().error.message, "billing_read")
        assert.notProperty(rotate.json(), "secret")
        const revoke = yield* call("DELETE", `/v1/keys/${organization.ownerKeyId}`, { secret: narrow.secret })
        assert.strictEqual(revoke.status, 403)
        assert.strictEqual(codeOf(revoke), "scope_denied")
        const sql = yield* SqlClient.SqlClient
        const [owner] = yield* sql<{ state: string; secret_prefix: string }>`
          SELECT state, secret_prefix FROM api_keys WHERE id = ${organization.ownerKeyId}`
        assert.strictEqual(owner!.state, "active")
        assert.strictEqual(owner!.secret_prefix, organization.secret.slice(0, 13), "not rotated")
        assert.strictEqual((yield* call("GET", "/v1/keys", { secret: organization.secret })).status, 200)
      }))

    it.effect("a key within the caller's scopes is rotated and revoked", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const caller = yield* seedKey(organization.organizationId, organization.ownerId, ["keys_read", "keys_write"])
        const target = yield* seedKey(organization.organizationId, organization.ownerId, ["keys_read"])
        const rotated = yield* call("POST", `/v1/keys/${target.id}/rotate`, { secret: caller.secret })
        assert.strictEqual(rotated.status, 200)
        const revoked = yield* call("DELETE", `/v1/keys/${target.id}`, { secret: caller.secret })
        assert.strictEqual(revoked.status, 200)
        assert.strictEqual(revoked.json().state, "revoked")
      }))
  })

  describe("last_used_at", () => {
    it.effect("null until used, set after the first use by the background flush", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const key = yield* seedKey(organization.organizationId, organization.ownerId, ["keys_read"])
        const unused = yield* call("GET", `/v1/keys/${key.id}`, { secret: organization.secret })
        assert.isNull(unused.json().last_used_at)
        yield* call("GET", "/v1/keys", { secret: key.secret })
        // Waits for the flush however slow the machine (the test's timeout bounds the wait).
        const used = yield* Effect.repeat(call("GET", `/v1/keys/${key.id}`, { secret: organization.secret }), {
          schedule: Schedule.spaced("100 millis"),
          until: (response) => response.json().last_used_at !== null
        })
        assert.match(used.json().last_used_at, TimestampPattern)
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ last_used_at: Date }>`SELECT last_used_at FROM api_keys WHERE id = ${key.id}`
        yield* call("GET", "/v1/keys", { secret: key.secret })
        yield* Effect.sleep("1500 millis")
        const [after] = yield* sql<{ last_used_at: Date }>`SELECT last_used_at FROM api_keys WHERE id = ${key.id}`
        assert.strictEqual(after!.last_used_at.getTime(), row!.last_used_at.getTime(), "not rewritten within the minute")
      }))

    it.effect("a key revoked right after its first use is revoked with that use; revoking again returns it unchanged", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const key = yield* seedKey(organization.organizationId, organization.ownerId, ["keys_read"])
        assert.strictEqual((yield* call("GET", "/v1/keys", { secret: key.secret })).status, 200)
        const revoked = yield* call("DELETE", `/v1/keys/${key.id}`, { secret: organization.secret })
        assert.strictEqual(revoked.status, 200)
        assert.match(revoked.json().last_used_at, TimestampPattern, "the use before the revocation is on the revoked key")
        // Past the background flush: nothing changes the revoked key any more.
        yield* Effect.sleep("1500 millis")
        const again = yield* call("DELETE", `/v1/keys/${key.id}`, { secret: organization.secret })
        assert.deepStrictEqual(again.json(), revoked.json())
      }))
  })
})
