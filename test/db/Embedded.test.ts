/**
 * The embedded database's ownership: one process opens the files; a second opener is refused with the owner's pid;
 * tools reach the owner's socket instead; a lock left by a dead process is taken over.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { cpSync, mkdtempSync, rmSync, writeFileSync, existsSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { inject } from "vitest"
import { findOwner, openEmbedded, ownerTarget } from "../../src/db/Embedded.js"
import { pgClientLayer } from "../../src/db/PgPool.js"

const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "arbiter-embedded-"))
  const template = inject("pgliteTemplate")
  if (template !== "") cpSync(join(template, "pgdata"), join(dir, "pgdata"), { recursive: true })
  return dir
}

describe("embedded database", () => {
  it.live("a second opener is refused, tools go through the owner's socket, the lock goes with the owner", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      const scope = yield* Scope.make()
      const target = yield* openEmbedded(dir).pipe(Scope.provide(scope))
      assert.isTrue(existsSync(join(dir, "embedded.lock")))

      const second = yield* Effect.exit(Effect.scoped(openEmbedded(dir)))
      assert.isTrue(Exit.isFailure(second))
      if (Exit.isFailure(second)) assert.include(String(second.cause), `in use by process ${process.pid}`)

      const owner = yield* findOwner(dir)
      assert.isUndefined(owner, "a process does not treat itself as another owner")
      const viaSocket = yield* Effect.scoped(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ one: number }>`SELECT 1 AS one`).pipe(
          Effect.provide(pgClientLayer(target, { max: 1 }))
        )
      )
      assert.deepStrictEqual(viaSocket, [{ one: 1 }])

      yield* Scope.close(scope, Exit.void)
      assert.isFalse(existsSync(join(dir, "embedded.lock")))
      rmSync(dir, { recursive: true, force: true })
    }), { timeout: 60_000 })

  it.live("a lock left by a process that died is taken over", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      writeFileSync(join(dir, "embedded.lock"), JSON.stringify({ pid: 2 ** 22 + 12345, host: dir, port: 5432 }))
      const owner = yield* findOwner(dir)
      assert.isUndefined(owner)
      const target = yield* Effect.scoped(openEmbedded(dir))
      assert.strictEqual(ownerTarget({ pid: 1, host: target.host, port: target.port }).host, target.host)
      rmSync(dir, { recursive: true, force: true })
    }), { timeout: 60_000 })
})
