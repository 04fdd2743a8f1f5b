/**
 * The ledger's `key_id` filter and paging (docs/decisions.md, "Usage by key and model, paging, export"): entries
 * carry the key whose run made them (null for a console session), `key_id` keeps one key's entries of the caller's
 * organization, a walk by `next_cursor` with entries recorded during it returns each earlier entry once, in order,
 * `offset` skips entries, and the statements read their index without sorting. `cursor` with `offset`, a negative
 * offset, a malformed key id and a cursor this organization's ledger did not issue are `400 invalid_parameter`.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { usageStatements } from "../../src/usage/UsageRepo.js"
import type { LedgerQuery } from "../../src/usage/LedgerPaging.js"
import { call, codeOf } from "../support/Api.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerLive } from "../support/TestServer.js"
import { getJson, windowQuery } from "../support/Usage.js"
import type { PlanNode } from "../support/UsagePlans.js"
import { insertRun, seedLedgerVolume } from "./LedgerSeed.js"

const start = new Date(Math.floor(Date.now() / 1000) * 1000 - 86_400_000)
const end = new Date(start.getTime() + 2 * 86_400_000)
const window = windowQuery(start, end)

const KeyA = `key_${"a".repeat(32)}`
const KeyB = `key_${"b".repeat(32)}`

/** The ids of an organization's entries in the window, newest first (ties by id), optionally one key's. */
const storedEntries = (organizationId: string, keyId: string | null = null) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ provider_request_id: string | null; run_id: string; retry_ordinal: number; key_id: string | null }>`
        SELECT provider_request_id, run_id::text, retry_ordinal, key_id FROM ledger_entries
        WHERE organization_id = ${organizationId} AND (${keyId}::text IS NULL OR key_id = ${keyId})
          AND created_at >= ${start.toISOString()}::timestamptz AND created_at < ${end.toISOString()}::timestamptz
        ORDER BY created_at DESC, id DESC`,
      (rows) => rows.map((row) => `run_${row.run_id}/${row.retry_ordinal}/${row.key_id}`)
    ))

const identify = (entry: any) => `${entry.run_id}/${entry.retry_ordinal}/${entry.key_id}`

const assertInvalidParameter = (response: { status: number; text: string }, rule: string, what: string) => {
  assert.strictEqual(response.status, 400, `${what}: ${response.text}`)
  assert.strictEqual(codeOf(response as any), "invalid_parameter", what)
  assert.include(JSON.parse(response.text).error.message, rule, what)
}

/** Walks the ledger by cursor, `between` running after each page; returns the entries seen and the pages. */
const walk = (secret: string, query: string, between: Effect.Effect<unknown, unknown, any>) =>
  Effect.gen(function*() {
    const seen: Array<string> = []
    let page = yield* getJson(`/v1/usage/ledger?${query}`, secret)
    let pages = 1
    for (;;) {
      seen.push(...page.entries.map(identify))
      if (page.next_cursor === null) return { seen, pages }
      yield* between
      page = yield* getJson(`/v1/usage/ledger?${query}&cursor=${encodeURIComponent(page.next_cursor)}`, secret)
      pages++
    }
  })

const hasSort = (plan: PlanNode): boolean => plan["Node Type"].includes("Sort") || (plan.Plans ?? []).some(hasSort)
const indexesOf = (plan: PlanNode): ReadonlyArray<string> => [
  ...(plan["Index Name"] === undefined ? [] : [plan["Index Name"]]),
  ...(plan.Plans ?? []).flatMap(indexesOf)
]

layer(TestServerLive(), { excludeTestServices: true, timeout: "240 seconds" })("ledger by key, by cursor and by offset", (it) => {
  describe("GET /v1/usage/ledger?key_id= > 200", () => {
    it.effect("entries carry their run's key; key_id keeps that key's entries of this organization only", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* seedOrganization()
        const other = yield* seedOrganization()
        const at = new Date(start.getTime() + 3_600_000)
        const calls = [{ model: "m1", input: 10, output: 1, cost: 5 }, { model: "m2", input: 20, output: 1, cost: 9 }]
        for (const [index, key] of [KeyA, KeyB, null, KeyA].entries()) {
          yield* insertRun(organizationId, { key, state: "completed", calls, at: new Date(at.getTime() + index * 1_000) })
        }
        yield* insertRun(other.organizationId, { key: KeyA, state: "completed", calls, at })

        const all = (yield* getJson(`/v1/usage/ledger?${window}`, secret)).entries
        assert.deepStrictEqual(all.map(identify), yield* storedEntries(organizationId))
        assert.deepStrictEqual(all.map((entry: any) => entry.key_id), [KeyA, KeyA, null, null, KeyB, KeyB, KeyA, KeyA])
        const byA = yield* getJson(`/v1/usage/ledger?${window}&key_id=${KeyA}`, secret)
        assert.deepStrictEqual(byA.entries, all.filter((entry: any) => entry.key_id === KeyA))
        assert.strictEqual(byA.next_cursor, null)
        const byB = (yield* getJson(`/v1/usage/ledger?${window}&key_id=${KeyB}&limit=1`, secret))
        assert.deepStrictEqual(byB.entries, [all[4]])
        const nextB = yield* getJson(`/v1/usage/ledger?${window}&key_id=${KeyB}&limit=1&cursor=${encodeURIComponent(byB.next_cursor)}`, secret)
        assert.deepStrictEqual(nextB.entries, [all[5]])
        assert.strictEqual(nextB.next_cursor, null)
        const run = yield* getJson(`/v1/usage/runs/${all[4].run_id}`, secret)
        assert.deepStrictEqual(run.calls.map((entry: any) => entry.key_id), [KeyB, KeyB], "a run's calls carry its key too")
        const unknown = yield* getJson(`/v1/usage/ledger?${window}&key_id=key_${"0".repeat(32)}`, secret)
        assert.deepStrictEqual(unknown.entries, [])
        const foreign = yield* getJson(`/v1/usage/ledger?${window}&key_id=${KeyA}`, other.secret)
        assert.lengthOf(foreign.entries, 2, "the other organization sees its own entries of that key only")
      }))
  })

  describe("GET /v1/usage/ledger?cursor= > 200", () => {
    it.effect("a walk with entries recorded during it returns each earlier entry once, in the ledger's order", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* seedOrganization()
        yield* seedLedgerVolume(organizationId, { runs: 300, callsPerRun: 4, from: start, keys: [KeyA, KeyB], idLength: 40 })
        const before = yield* storedEntries(organizationId)
        const beforeA = yield* storedEntries(organizationId, KeyA)
        assert.lengthOf(before, 1_200)
        let minute = 0
        const recordMore = Effect.gen(function*() {
          minute++
          const call = { model: "m1", input: 1, output: 1, cost: 1 }
          yield* insertRun(organizationId, { key: KeyA, state: "completed", calls: [call], at: new Date(end.getTime() - minute * 60_000) })
          yield* insertRun(organizationId, { key: KeyA, state: "completed", calls: [call], at: new Date(start.getTime() + minute) })
        })
        const { pages, seen } = yield* walk(secret, `${window}&limit=100`, recordMore)
        assert.strictEqual(new Set(seen).size, seen.length, "no entry twice")
        const earlier = new Set(before)
        assert.deepStrictEqual(seen.filter((entry) => earlier.has(entry)), before)
        assert.isAtLeast(pages, 12)
        assert.isAbove(seen.length, before.length, "entries recorded behind the walk's position are listed too")

        const byKey = yield* walk(secret, `${window}&limit=50&key_id=${KeyA}`, Effect.void)
        const earlierA = new Set(beforeA)
        assert.deepStrictEqual(byKey.seen.filter((entry) => earlierA.has(entry)), beforeA)
        assert.isTrue(byKey.seen.every((entry) => entry.endsWith(`/${KeyA}`)))
      }), 180_000)

    it.effect("offset skips entries (and its page has a cursor); with a key filter and a cursor no plan sorts", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* seedOrganization()
        yield* seedLedgerVolume(organizationId, { runs: 10, callsPerRun: 2, from: start, keys: [KeyA, KeyB], idLength: 40 })
        const stored = yield* storedEntries(organizationId)
        const page = yield* getJson(`/v1/usage/ledger?${window}&limit=4&offset=3`, secret)
        assert.deepStrictEqual(page.entries.map(identify), stored.slice(3, 7))
        const next = yield* getJson(`/v1/usage/ledger?${window}&limit=4&cursor=${encodeURIComponent(page.next_cursor)}`, secret)
        assert.deepStrictEqual(next.entries.map(identify), stored.slice(7, 11))
        for (const offset of ["20", "9007199254740992", "9".repeat(300)]) {
          const empty = yield* getJson(`/v1/usage/ledger?${window}&offset=${offset}`, secret)
          assert.deepStrictEqual([empty.entries, empty.next_cursor], [[], null], offset)
        }
        assert.deepStrictEqual((yield* getJson(`/v1/usage/ledger?${window}&offset=-0`, secret)).entries.map(identify), stored)

        const sql = yield* SqlClient.SqlClient
        const key = { at: "2026-01-01T00:00:00.000001Z", id: "5" }
        const queries: ReadonlyArray<readonly [string, LedgerQuery]> = [
          ["ledger_entries_key_newest", { keyId: KeyA, start: { _tag: "After", key } }],
          ["ledger_entries_newest", { keyId: null, start: { _tag: "After", key } }]
        ]
        for (const [index, query] of queries) {
          const [text, params] = usageStatements(sql).ledger(organizationId, { start, end }, 101, query).compile()
          const [row] = yield* sql.withTransaction(Effect.andThen(
            sql`SET LOCAL enable_seqscan = off`,
            sql.unsafe<{ "QUERY PLAN": ReadonlyArray<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) ${text}`, params)
          ))
          const plan = row!["QUERY PLAN"][0]!.Plan
          assert.include(indexesOf(plan), index, JSON.stringify(plan))
          assert.isFalse(hasSort(plan), `no sort: ${JSON.stringify(plan)}`)
        }
      }))
  })

  describe("GET /v1/usage/ledger > 400 invalid_parameter", () => {
    it.effect("cursor with offset, a negative offset, a malformed key id, a cursor not of this organization's ledger", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* seedOrganization()
        const other = yield* seedOrganization()
        const calls = [{ model: "m1", input: 1, output: 1, cost: 1 }, { model: "m1", input: 1, output: 1, cost: 1 }]
        const at = new Date(start.getTime() + 60_000)
        yield* insertRun(organizationId, { key: KeyA, state: "completed", calls, at })
        yield* insertRun(other.organizationId, { key: KeyA, state: "completed", calls, at })
        yield* insertRun(other.organizationId, { key: KeyA, state: "completed", calls, at })
        const cursor: string = (yield* getJson(`/v1/usage/ledger?${window}&limit=1`, secret)).next_cursor
        const foreign: string = (yield* getJson(`/v1/usage/ledger?${window}&limit=1`, other.secret)).next_cursor
        const runs: string = (yield* getJson("/v1/runs?limit=1&offset=0", other.secret)).next_cursor
        assert.isString(runs)
        const encoded = encodeURIComponent(cursor)
        for (const query of [`cursor=${encoded}&offset=0`, `offset=5&cursor=${encoded}&key_id=${KeyA}`]) {
          assertInvalidParameter(yield* call("GET", `/v1/usage/ledger?${query}`, { secret }), "cursor or offset, not both", query)
        }
        for (const offset of ["-1", "-99999999999999999999"]) {
          assertInvalidParameter(yield* call("GET", `/v1/usage/ledger?offset=${offset}`, { secret }), "offset must be at least 0", offset)
        }
        for (const keyId of ["", "key_", "KEY_" + "a".repeat(32), `key_${"A".repeat(32)}`, `key_${"a".repeat(33)}`, "org_1"]) {
          const response = yield* call("GET", `/v1/usage/ledger?key_id=${encodeURIComponent(keyId)}`, { secret })
          assertInvalidParameter(response, "key_id must be key_ followed by 32 lowercase hex digits", keyId)
        }
        const [body, check] = cursor.split(".") as [string, string]
        for (const bad of ["", "abc", cursor.slice(0, -2), `${body}x.${check}`, `${body}.${check}.`, foreign, runs, "%".repeat(300)]) {
          const response = yield* call("GET", `/v1/usage/ledger?cursor=${encodeURIComponent(bad)}`, { secret })
          assertInvalidParameter(response, "cursor is not a next_cursor of this organization's ledger", bad.slice(0, 30))
        }
        const limitFirst = yield* call("GET", `/v1/usage/ledger?limit=0&cursor=x&offset=1`, { secret })
        assertInvalidParameter(limitFirst, "limit must be at least 1", "the limit is checked first")
        const plain = yield* call("GET", "/v1/usage/ledger?offset=1.5", { secret })
        assert.isTrue(plain.text.startsWith("Failed to deserialize query string: "), plain.text)
      }))
  })
})
