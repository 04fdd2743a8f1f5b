/**
 * Cursor paging of `GET /v1/runs` (docs/decisions.md, "Usage by key and model, paging, export"): a walk by
 * `next_cursor` over 10,000 runs, with runs created newer, older and at the very instant of a page's last run while
 * it walks, returns every run that existed before it exactly once, in the list's order; offset pages carry a cursor
 * too; `cursor` with `offset`, or a cursor this organization's run list did not issue, is `400 invalid_body`.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { call, codeOf } from "../support/Api.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerLive } from "../support/TestServer.js"
import { getJson } from "../support/Usage.js"
import { insertRun, seedRunVolume } from "../usage/LedgerSeed.js"

const compact = (uuid: string) => `run_${uuid.replace(/-/g, "")}`

/** The organization's runs as the list orders them (newest first, ties by id), as compact run ids. */
const storedOrder = (organizationId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ id: string }>`SELECT id::text FROM runs WHERE organization_id = ${organizationId}
        ORDER BY created_at DESC, id DESC`,
      (rows) => rows.map((row) => compact(row.id))
    ))

const assertInvalidBody = (response: { status: number; text: string }, what: string) => {
  assert.strictEqual(response.status, 400, `${what}: ${response.text}`)
  assert.strictEqual(codeOf(response as any), "invalid_body", what)
}

layer(TestServerLive(), { excludeTestServices: true, timeout: "300 seconds" })("run list cursors", (it) => {
  describe("GET /v1/runs?cursor= > 200", () => {
    it.effect("a walk over 10,000 runs, with runs created during it, returns each earlier run once, in order", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* seedOrganization()
        const newest = new Date(Date.now() - 3_600_000)
        yield* seedRunVolume(organizationId, 10_000, newest)
        const before = yield* storedOrder(organizationId)
        assert.lengthOf(before, 10_000)
        const sql = yield* SqlClient.SqlClient

        const seen: Array<string> = []
        let page = yield* getJson("/v1/runs?limit=100", secret)
        let pages = 1
        for (;;) {
          seen.push(...page.runs.map((run: any) => run.run_id))
          if (page.next_cursor === null) break
          assert.lengthOf(page.runs, 100)
          const last = page.runs[page.runs.length - 1].run_id.slice(4)
          // A run newer than all (never listed: before the walk's position), one older than all (listed at the
          // end), and one at the very instant of the page's last run (listed or not by its id, never twice).
          yield* insertRun(organizationId, { key: null, state: "completed", calls: [], at: new Date() })
          yield* insertRun(organizationId, { key: null, state: "completed", calls: [], at: new Date(newest.getTime() - 86_400_000) })
          yield* sql`INSERT INTO runs (id, organization_id, origin, idempotency_key, kind, state, input_digest, period,
              hold_micros, hold_tokens, hold_credit, held, deadline_at, created_at)
            SELECT gen_random_uuid(), organization_id, 'runs', 'tie-' || gen_random_uuid(), 'decision', 'completed',
              input_digest, period, 0, 0, false, false, now(), created_at
            FROM runs WHERE id = ${last}::uuid`
          page = yield* getJson(`/v1/runs?limit=100&cursor=${encodeURIComponent(page.next_cursor)}`, secret)
          assert.strictEqual(page.offset, 0)
          pages++
        }

        assert.strictEqual(new Set(seen).size, seen.length, "no run listed twice")
        const earlier = new Set(before)
        assert.deepStrictEqual(seen.filter((id) => earlier.has(id)), before, "every earlier run once, in the list's order")
        assert.isAtLeast(pages, 100)
        const listed = new Set(seen)
        const after = yield* storedOrder(organizationId)
        assert.deepStrictEqual(seen, after.filter((id) => listed.has(id)), "the walk follows the list's order")
      }), 240_000)

    it.effect("an offset page carries the cursor of its last run; the next page by cursor follows it exactly", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* seedOrganization()
        yield* seedRunVolume(organizationId, 7, new Date(Date.now() - 60_000))
        const order = yield* storedOrder(organizationId)
        const first = yield* getJson("/v1/runs?limit=2&offset=1", secret)
        assert.deepStrictEqual(first.runs.map((run: any) => run.run_id), order.slice(1, 3))
        assert.strictEqual(first.offset, 1)
        assert.isString(first.next_cursor)
        const second = yield* getJson(`/v1/runs?limit=3&cursor=${encodeURIComponent(first.next_cursor)}`, secret)
        assert.deepStrictEqual(second.runs.map((run: any) => run.run_id), order.slice(3, 6))
        assert.deepInclude(second, { limit: 3, offset: 0 })
        const last = yield* getJson(`/v1/runs?limit=500&cursor=${encodeURIComponent(second.next_cursor)}`, secret)
        assert.deepStrictEqual(last.runs.map((run: any) => run.run_id), order.slice(6))
        assert.deepInclude(last, { limit: 100, next_cursor: null })
        const exact = yield* getJson("/v1/runs?limit=7", secret)
        assert.strictEqual(exact.next_cursor, null, "a page ending with the last run has no next page")
        assert.strictEqual((yield* getJson("/v1/runs?limit=6", secret)).runs.length, 6)
        assert.isString((yield* getJson("/v1/runs?limit=6", secret)).next_cursor)
      }))
  })

  describe("GET /v1/runs?cursor= > 400 invalid_body", () => {
    it.effect("cursor with offset, and any cursor this organization's run list did not issue", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* seedOrganization()
        const other = yield* seedOrganization()
        yield* seedRunVolume(organizationId, 3, new Date(Date.now() - 60_000))
        yield* seedRunVolume(other.organizationId, 3, new Date(Date.now() - 60_000))
        const call2 = { model: "m1", input: 1, output: 1, cost: 1 }
        yield* insertRun(organizationId, { key: null, state: "completed", calls: [call2, call2], at: new Date(Date.now() - 1_000) })
        const cursor: string = (yield* getJson("/v1/runs?limit=1", secret)).next_cursor
        const foreign: string = (yield* getJson("/v1/runs?limit=1", other.secret)).next_cursor
        const ledger: string = (yield* getJson("/v1/usage/ledger?limit=1", secret)).next_cursor
        assert.isString(ledger)
        const encoded = encodeURIComponent(cursor)
        for (const query of [`cursor=${encoded}&offset=0`, `offset=2&cursor=${encoded}`, `limit=5&offset=0&cursor=${encoded}`]) {
          const response = yield* call("GET", `/v1/runs?${query}`, { secret })
          assertInvalidBody(response, query)
          assert.include(response.json().error.message, "cursor or offset, not both", query)
        }
        const [body, check] = cursor.split(".") as [string, string]
        const flipped = `${body.slice(0, 5)}${body[5] === "A" ? "B" : "A"}${body.slice(6)}.${check}`
        for (const bad of ["", "abc", "a.b", cursor.slice(0, -1), `${cursor}x`, flipped, `${body}.${check}.${check}`, foreign, ledger, "x".repeat(5_000)]) {
          const response = yield* call("GET", `/v1/runs?cursor=${encodeURIComponent(bad)}`, { secret })
          assertInvalidBody(response, `cursor ${bad.slice(0, 40)}`)
          assert.include(response.json().error.message, "not a next_cursor of this organization's run list")
        }
        const repeated = yield* call("GET", `/v1/runs?cursor=${encoded}&cursor=${encoded}`, { secret })
        assertInvalidBody(repeated, "a repeated cursor")
      }))
  })
})
