/**
 * First start: on the embedded database, an organization `default` with an owner key, the secret written to
 * `DATA_DIR/bootstrap.json` (mode 0600) and working at once; never a second time; never on PostgreSQL.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { existsSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { AppConfig } from "../../src/config/AppConfig.js"
import { Organizations } from "../../src/organizations/Organizations.js"
import { call } from "../support/Api.js"
import { databaseMode } from "../support/TestDatabase.js"
import { TestServerLive } from "../support/TestServer.js"

layer(TestServerLive({}, { bootstrap: true }), { excludeTestServices: true, timeout: "60 seconds" })("first start", (it) => {
  if (databaseMode() === "embedded") {
    it.effect("creates organization default with an owner key saved to bootstrap.json (0600), once", () =>
      Effect.gen(function*() {
        const config = yield* AppConfig
        const file = join(config.dataDir, "bootstrap.json")
        assert.isTrue(existsSync(file))
        assert.strictEqual(statSync(file).mode & 0o777, 0o600)
        const saved = JSON.parse(readFileSync(file, "utf8"))
        assert.deepStrictEqual(Object.keys(saved).sort(), ["key_id", "organization_id", "secret"])
        const response = yield* call("GET", "/v1/keys", { secret: saved.secret })
        assert.strictEqual(response.status, 200)
        const [owner] = response.json().keys
        assert.strictEqual(owner.id, saved.key_id)
        assert.strictEqual(owner.scopes.length, 9)
        const sql = yield* SqlClient.SqlClient
        const organizations = yield* sql<{ id: string; name: string }>`SELECT id, name FROM organizations`
        assert.deepStrictEqual(organizations, [{ id: saved.organization_id, name: "default" }])
        const again = yield* (yield* Organizations).bootstrap
        assert.isTrue(Option.isNone(again))
      }))
  } else {
    it.effect("does nothing on PostgreSQL: no organization, no bootstrap.json", () =>
      Effect.gen(function*() {
        const config = yield* AppConfig
        const sql = yield* SqlClient.SqlClient
        const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM organizations`
        assert.strictEqual(count!.n, 0)
        assert.isFalse(existsSync(join(config.dataDir, "bootstrap.json")))
      }))
  }
})
