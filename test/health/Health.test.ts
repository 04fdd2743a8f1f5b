/**
 * Health and description routes of the real service: liveness, readiness (and its 503 while migrations are
 * pending), the OpenAPI document (3.1, version 0.1.0, identical to the committed `schema/openapi.json`) and the docs
 * page. No credential needed; query strings ignored.
 */
import * as SqlClient from "effect/sql/SqlClient"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { ServerAddress } from "../../src/server/Listen.js"
import { rawRequest } from "../support/RawHttp.js"
import { TestServerLive } from "../support/TestServer.js"

const get = (path: string) => Effect.flatMap(ServerAddress, (address) => rawRequest(address.url, { path }))

layer(TestServerLive(), { excludeTestServices: true, timeout: "60 seconds" })("health and description", (it) => {
  describe("GET /healthz", () => {
    it.effect("200 {status: ok}, query ignored", () =>
      Effect.gen(function*() {
        const res = yield* get("/healthz?probe=1")
        assert.strictEqual(res.status, 200)
        assert.deepStrictEqual(res.json(), { status: "ok" })
        assert.match(String(res.headers["x-request-id"]), /^req_[0-9a-f]{32}$/)
      }))
  })

  describe("GET /readyz", () => {
    it.effect("200 ready when the database answers and migrations are applied", () =>
      Effect.gen(function*() {
        const res = yield* get("/readyz?verbose=true")
        assert.strictEqual(res.status, 200)
        assert.deepStrictEqual(res.json(), { status: "ready", checks: { database: "ok", migrations: "applied" } })
      }))

    it.effect("503 while a shipped migration is not recorded as applied", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [latest] = yield* sql<{ migration_id: number; name: string }>`
          SELECT migration_id, name FROM effect_sql_migrations ORDER BY migration_id DESC LIMIT 1`
        assert.isDefined(latest, "the build ships at least one migration")
        yield* sql`DELETE FROM effect_sql_migrations WHERE migration_id = ${latest!.migration_id}`
        const res = yield* get("/readyz")
        yield* sql`INSERT INTO effect_sql_migrations (migration_id, name) VALUES (${latest!.migration_id}, ${latest!.name})`
        assert.strictEqual(res.status, 503)
        assert.deepStrictEqual(res.json(), { status: "unavailable", checks: { database: "ok", migrations: "pending" } })
        const again = yield* get("/readyz")
        assert.strictEqual(again.status, 200)
      }))
  })

  describe("GET /openapi.json", () => {
    it.effect("serves OpenAPI 3.1, version 0.1.0, equal to the committed schema/openapi.json", () =>
      Effect.gen(function*() {
        const res = yield* get("/openapi.json")
        assert.strictEqual(res.status, 200)
        const served = res.json()
        assert.strictEqual(served.openapi, "3.1.0")
        assert.strictEqual(served.info.version, "0.1.0")
        const committed = JSON.parse(readFileSync(new URL("../../schema/openapi.json", import.meta.url), "utf8"))
        assert.deepStrictEqual(served, committed, "schema/openapi.json is stale: run npm run openapi")
      }))
  })

  describe("GET /docs", () => {
    it.effect("serves a self-contained interactive docs page", () =>
      Effect.gen(function*() {
        const res = yield* get("/docs")
        assert.strictEqual(res.status, 200)
        assert.match(String(res.headers["content-type"]), /^text\/html/)
        assert.include(res.text, "Arbiter")
        assert.notMatch(res.text, /<script[^>]+src="https?:/)
        // Scalar's script inline (read on the first request) and the OpenAPI document it renders
        assert.include(res.text, "Original file: /npm/@scalar/api-reference@")
        assert.include(res.text, '"openapi":"3.1.0"')
        assert.isAbove(res.text.length, 3_000_000)
        const again = yield* get("/docs")
        assert.strictEqual(again.status, 200)
        assert.strictEqual(again.text, res.text, "the page is built once and kept")
      }))
  })
})
