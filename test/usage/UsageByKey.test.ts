/**
 * Usage by key through real runs: runs made over HTTP with two API keys (and the owner's key) are grouped under the
 * key that made each, their ledger entries and per-run calls carry it, `key_id` filters the ledger and the export,
 * and the groups add up to the rollup. Needs admission and settlement to store the calling key (migration 0009).
 */
import { assert, describe, layer } from "@effect/vitest"
import { parse } from "csv-parse/sync"
import { Effect } from "effect"
import { call } from "../support/Api.js"
import { oneQuestion, postRun } from "../support/Runs.js"
import { seedKey, seedOrganization } from "../support/Seed.js"
import { TestServerLive } from "../support/TestServer.js"
import { getJson } from "../support/Usage.js"

layer(TestServerLive(), { excludeTestServices: true, timeout: "120 seconds" })("usage by key over real runs", (it) => {
  describe("GET /v1/usage?group_by=key, /v1/usage/ledger?key_id=, /v1/usage/export > 200", () => {
    it.effect("runs made with API keys are counted, listed and exported under the key that made them", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const { ownerKeyId, secret } = organization
        const first = yield* seedKey(organization.organizationId, organization.ownerId, ["runs_write"], "first")
        const second = yield* seedKey(organization.organizationId, organization.ownerId, ["runs_write"], "second")
        const made = new Map<string, Array<string>>([[first.id, []], [second.id, []], [ownerKeyId, []]])
        for (const [key, keySecret] of [[first.id, first.secret], [first.id, first.secret], [second.id, second.secret], [ownerKeyId, secret]] as const) {
          const response = yield* postRun(keySecret, oneQuestion())
          assert.strictEqual(response.status, 200, response.text)
          made.get(key)!.push(response.json().run_id)
        }

        const rollup = yield* getJson("/v1/usage", secret)
        const byKey = yield* getJson("/v1/usage?group_by=key", secret)
        const runsOf = new Map(byKey.groups.map((group: any) => [group.key_id, group.runs.total]))
        assert.deepStrictEqual(runsOf, new Map([[first.id, 2], [second.id, 1], [ownerKeyId, 1]]))
        for (const path of ["runs.total", "tokens.total_tokens", "spend.settled_micros"]) {
          const pick = (body: any) => path.split(".").reduce((node, part) => node[part], body)
          assert.strictEqual(byKey.groups.reduce((sum: number, group: any) => sum + pick(group), 0), pick(rollup), path)
        }

        const ledger = (yield* getJson("/v1/usage/ledger", secret)).entries
        assert.isAtLeast(ledger.length, 4)
        for (const entry of ledger) {
          const compact = entry.run_id.replace(/-/g, "")
          const owner = [...made].find(([, runs]) => runs.includes(compact))
          assert.isDefined(owner, entry.run_id)
          assert.strictEqual(entry.key_id, owner![0], `${entry.run_id} was made with ${owner![0]}`)
        }
        const ofFirst = (yield* getJson(`/v1/usage/ledger?key_id=${first.id}`, secret)).entries
        assert.deepStrictEqual(ofFirst, ledger.filter((entry: any) => entry.key_id === first.id))
        const run = yield* getJson(`/v1/usage/runs/${made.get(second.id)![0]}`, secret)
        assert.isTrue(run.calls.length > 0 && run.calls.every((entry: any) => entry.key_id === second.id))

        const exported = yield* call("GET", `/v1/usage/export?key_id=${second.id}`, { secret })
        assert.strictEqual(exported.status, 200, exported.text)
        const records: Array<Record<string, string>> = parse(exported.text, { columns: true })
        assert.deepStrictEqual(
          records.map((record) => [record.run_id, record.key_id]),
          ledger.filter((entry: any) => entry.key_id === second.id).map((entry: any) => [entry.run_id, second.id])
        )
      }))
  })
})
