/**
 * `GET /v1/usage/export?format=csv` (docs/decisions.md, "Usage by key and model, paging, export"): 100,000 ledger
 * entries come back as one RFC 4180 file that a CSV library parses into exactly the window's ledger, newest first,
 * and the file is streamed, not built: the client holds the download after its first bytes, an entry is recorded
 * then at the very end of the ledger's order, and the rest of the download still holds it (a response read from
 * the database before its first byte went out could not). Bad parameters are `400 invalid_parameter`.
 */
import { assert, describe, layer } from "@effect/vitest"
import { parse } from "csv-parse/sync"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { ServerAddress } from "../../src/server/Listen.js"
import { call, codeOf } from "../support/Api.js"
import { seedKey, seedOrganization } from "../support/Seed.js"
import { TestServerLive } from "../support/TestServer.js"
import { getJson, windowQuery } from "../support/Usage.js"
import { startDownload } from "./Download.js"
import { insertRun, seedLedgerVolume } from "./LedgerSeed.js"

const start = new Date(Math.floor(Date.now() / 1000) * 1000 - 86_400_000)
const end = new Date(start.getTime() + 2 * 86_400_000)
const window = windowQuery(start, end)

const KeyA = `key_${"a".repeat(32)}`
const KeyB = `key_${"b".repeat(32)}`

const Columns = ["run_id", "retry_ordinal", "provider", "model_id", "provider_request_id", "status", "input_tokens",
  "output_tokens", "total_tokens", "cost_micros", "created_at", "key_id"]

/** The window's entries as the export must write them, newest first (ties by id). */
const expectedRecords = (organizationId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<Record<string, string>>`SELECT 'run_' || run_id::text AS run_id, retry_ordinal::text, provider, model_id,
        COALESCE(provider_request_id, '') AS provider_request_id, status, input_tokens::text, output_tokens::text,
        (input_tokens + output_tokens)::text AS total_tokens, cost_micros::text,
        to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS created_at, COALESCE(key_id, '') AS key_id
      FROM ledger_entries
      WHERE organization_id = ${organizationId}
        AND created_at >= ${start.toISOString()}::timestamptz AND created_at < ${end.toISOString()}::timestamptz
      ORDER BY ledger_entries.created_at DESC, ledger_entries.id DESC`)

const assertSameRecords = (actual: ReadonlyArray<Record<string, string>>, expected: ReadonlyArray<Record<string, string>>) => {
  assert.strictEqual(actual.length, expected.length, "one record per entry")
  for (let index = 0; index < expected.length; index++) {
    if (JSON.stringify(actual[index]) !== JSON.stringify(expected[index])) {
      assert.deepStrictEqual(actual[index], { ...expected[index] }, `record ${index}`)
    }
  }
}

const assertInvalidParameter = (response: { status: number; text: string }, rule: string, what: string) => {
  assert.strictEqual(response.status, 400, `${what}: ${response.text}`)
  assert.strictEqual(codeOf(response as any), "invalid_parameter", what)
  assert.include(JSON.parse(response.text).error.message, rule, what)
}

layer(TestServerLive(), { excludeTestServices: true, timeout: "300 seconds" })("ledger export", (it) => {
  describe("GET /v1/usage/export?format=csv > 200", () => {
    it.effect("100,000 entries, streamed: the file parses back to exactly the window's ledger", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* seedOrganization()
        yield* seedLedgerVolume(organizationId, { runs: 10_000, callsPerRun: 10, from: start, keys: [KeyA, KeyB], idLength: 120 })
        const address = yield* ServerAddress
        const download = startDownload(address.url, `/v1/usage/export?${window}&format=csv`, secret)
        const head = yield* Effect.promise(() => download.firstBytes)
        assert.strictEqual(head.status, 200)
        assert.strictEqual(head.headers["content-type"], "text/csv; charset=utf-8")
        assert.strictEqual(head.headers["transfer-encoding"], "chunked")
        assert.isUndefined(head.headers["content-length"])
        // Recorded while the download is held: the oldest entry of the window, so the last record of the file.
        yield* insertRun(organizationId, {
          key: null,
          state: "completed",
          at: new Date(start.getTime() - 1),
          calls: [{ model: "late", input: 7, output: 1, cost: 2 }]
        })
        download.resume()
        const { chunks, text } = yield* Effect.promise(() => download.done)

        assert.isTrue(text.startsWith(`${Columns.join(",")}\r\n`), text.slice(0, 200))
        assert.isTrue(text.endsWith("\r\n"))
        const records: Array<Record<string, string>> = parse(text, { columns: true, record_delimiter: "\r\n" })
        assert.strictEqual(records.length, 100_001)
        assert.strictEqual(records[records.length - 1]!.model_id, "late", "the entry recorded mid-download is in it")
        assertSameRecords(records, yield* expectedRecords(organizationId))
        assert.isAbove(chunks, 50, "the file came in many pieces")
        assert.isTrue(records.some((record) => record.model_id === "judge,\"13b\"" && record.provider_request_id!.includes("\n")))

        const ledger = (yield* getJson(`/v1/usage/ledger?${window}&limit=200`, secret)).entries
        assert.deepStrictEqual(
          records.slice(0, 200),
          ledger.map((entry: any) => ({
            run_id: entry.run_id,
            retry_ordinal: String(entry.retry_ordinal),
            provider: entry.provider,
            model_id: entry.model_id,
            provider_request_id: entry.provider_request_id ?? "",
            status: entry.status,
            input_tokens: String(entry.tokens.input_tokens),
            output_tokens: String(entry.tokens.output_tokens),
            total_tokens: String(entry.tokens.total_tokens),
            cost_micros: String(entry.cost_micros),
            created_at: entry.created_at,
            key_id: entry.key_id ?? ""
          })),
          "the same entries as the ledger's first page"
        )
      }), 240_000)

    it.effect("key_id keeps one key's entries; a window without entries is the header alone", () =>
      Effect.gen(function*() {
        const { organizationId, secret } = yield* seedOrganization()
        yield* seedLedgerVolume(organizationId, { runs: 30, callsPerRun: 3, from: start, keys: [KeyA, KeyB], idLength: 60 })
        const byKey = yield* call("GET", `/v1/usage/export?${window}&key_id=${KeyB}`, { secret })
        assert.strictEqual(byKey.status, 200, byKey.text)
        assert.strictEqual(byKey.headers["content-disposition"], "attachment; filename=\"ledger.csv\"")
        const records: Array<Record<string, string>> = parse(byKey.text, { columns: true })
        const expected = (yield* expectedRecords(organizationId)).filter((record) => record.key_id === KeyB)
        assert.lengthOf(expected, 45)
        assertSameRecords(records, expected)
        const empty = yield* call("GET", "/v1/usage/export?start_at=2020-01-01T00:00:00Z&end_at=2020-02-01T00:00:00Z", { secret })
        assert.strictEqual(empty.status, 200)
        assert.strictEqual(empty.text, `${Columns.join(",")}\r\n`)
      }))
  })

  describe("GET /v1/usage/export > 400, 403", () => {
    it.effect("a format other than csv, a malformed key id, the window rules; usage_read is required", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const { secret } = organization
        for (const format of ["xml", "", "CSV", "json"]) {
          const response = yield* call("GET", `/v1/usage/export?format=${format}`, { secret })
          assertInvalidParameter(response, "format must be csv", format)
        }
        assertInvalidParameter(yield* call("GET", "/v1/usage/export?key_id=nope", { secret }), "key_id must be key_", "key_id")
        assertInvalidParameter(
          yield* call("GET", "/v1/usage/export?end_at=2026-01-01T00:00:00Z&format=xml", { secret }),
          "start_at and end_at must be sent together",
          "the window first"
        )
        const unknown = yield* call("GET", "/v1/usage/export?limit=5", { secret })
        assert.isTrue(unknown.text.startsWith("Failed to deserialize query string: "), unknown.text)
        const reader = yield* seedKey(organization.organizationId, organization.ownerId, ["runs_read"])
        const denied = yield* call("GET", "/v1/usage/export", { secret: reader.secret })
        assert.strictEqual(denied.status, 403)
        assert.strictEqual(codeOf(denied), "scope_denied")
      }))
  })
})
