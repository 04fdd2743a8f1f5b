/**
 * Per-key limits (decisions.md, Extensions): set on create and by `PATCH /v1/keys/{key_id}` under the rotate/revoke
 * scope-containment rule; enforced at admission after the organization's quota and before the idempotency conflict
 * and credit, with `429 key_quota_exhausted` and `429 key_rate_limited` (with `Retry-After`); shown as `usage` on the
 * key; kept by a rotation. A refused run stores and holds nothing.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Fiber, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { CreditStore } from "../../src/ledger/CreditStore.js"
import { QuotaLedger } from "../../src/ledger/QuotaLedger.js"
import { SPEND_CEILING_MICROS } from "../../src/runs/RunLimits.js"
import { call, codeOf } from "../support/Api.js"
import { FakeConsole } from "../support/FakeConsole.js"
import { FakeUpstream } from "../support/FakeUpstream.js"
import type { RawResponse } from "../support/RawHttp.js"
import { freshKey, oneQuestion, postRun } from "../support/Runs.js"
import { seedKey, seedOrganization } from "../support/Seed.js"
import { TestServerWithConsoleLive, TestServerWithUpstreamLive } from "../support/TestServer.js"

const expect = (response: RawResponse, status: number, code: string | undefined, what: string) => {
  assert.strictEqual(response.status, status, `${what}: ${response.text.slice(0, 300)}`)
  assert.strictEqual(codeOf(response), code, what)
}

const createKey = (secret: string, body: Record<string, unknown>) =>
  Effect.map(call("POST", "/v1/keys", { secret, body: { name: "limited", scopes: ["runs_write", "runs_read"], ...body } }), (response) => {
    assert.strictEqual(response.status, 201, response.text)
    return response.json() as { id: string; secret: string; limits: any; usage: any }
  })

const patchKey = (secret: string, keyId: string, limits: Record<string, unknown>) =>
  call("PATCH", `/v1/keys/${keyId}`, { secret, body: { limits } })

const getKey = (secret: string, keyId: string) =>
  Effect.map(call("GET", `/v1/keys/${keyId}`, { secret }), (response) => response.json())

/**
 * Sends runs of `idempotencyKeys` at once while the upstream holds every call, and waits (however slow the machine)
 * until each run has either reached the upstream (admitted, its call held) or been answered (refused).
 */
const burstWhileHeld = (secret: string, idempotencyKeys: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const upstream = yield* FakeUpstream
    const calledBefore = (yield* upstream.requests).length
    let answered = 0
    const fibers = yield* Effect.forEach(
      idempotencyKeys,
      // Forked by this fiber (a fork returns at once), so the runs outlive the loop until they are joined.
      (idempotencyKey) => Effect.forkChild(Effect.tap(postRun(secret, oneQuestion(), idempotencyKey), () => Effect.sync(() => answered++)))
    )
    yield* Effect.repeat(upstream.requests, {
      schedule: Schedule.spaced("20 millis"),
      until: (requests) => requests.length - calledBefore + answered >= idempotencyKeys.length
    })
    return fibers
  })

const todayStart = () => `${new Date().toISOString().slice(0, 10)}T00:00:00Z`
const monthStart = () => `${new Date().toISOString().slice(0, 7)}-01T00:00:00Z`

const storedRuns = (organizationId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ runs: number; held: number }>`SELECT count(*)::int AS runs, count(*) FILTER (WHERE held)::int AS held
        FROM runs WHERE organization_id = ${organizationId}`,
      (rows) => rows[0]!
    ))

layer(TestServerWithUpstreamLive(), { excludeTestServices: true, timeout: "120 seconds" })("key limits", (it) => {
  describe("POST /v1/keys and PATCH /v1/keys/{key_id}", () => {
    it.effect("limits on create, shown with the key's usage; none by default; bad limits are refused", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        const plain = yield* createKey(secret, {})
        assert.deepStrictEqual(plain.limits, { spend_micros: null, tokens: null, runs_per_minute: null, period: "month" })
        assert.deepStrictEqual(plain.usage, {
          period_start_at: monthStart(),
          spend_settled_micros: 0,
          spend_reserved_micros: 0,
          spend_remaining_micros: null,
          tokens_settled: 0,
          tokens_reserved: 0,
          tokens_remaining: null
        })
        const limited = yield* createKey(secret, { limits: { spend_micros: 50_000, runs_per_minute: 5, period: "day" } })
        assert.deepStrictEqual(limited.limits, { spend_micros: 50_000, tokens: null, runs_per_minute: 5, period: "day" })
        assert.strictEqual(limited.usage.period_start_at, todayStart())
        assert.strictEqual(limited.usage.spend_remaining_micros, 50_000)
        assert.deepStrictEqual((yield* getKey(secret, limited.id)).limits, limited.limits)
        for (const limits of [{ spend_micros: -1 }, { runs_per_minute: 0 }, { tokens: 1.5 }, { period: "week" }, { colour: 1 }]) {
          const refused = yield* call("POST", "/v1/keys", { secret, body: { name: "x", scopes: ["runs_read"], limits } })
          assert.strictEqual(refused.status, 422, JSON.stringify(limits))
        }
      }))

    it.effect("PATCH merges (absent keeps, null clears), returns the key; 404 unknown, 409 revoked, 422 bad body", () =>
      Effect.gen(function*() {
        const { secret } = yield* seedOrganization()
        const key = yield* createKey(secret, { limits: { spend_micros: 10_000, tokens: 900 } })
        const changed = yield* patchKey(secret, key.id, { tokens: null, runs_per_minute: 60, period: "total" })
        assert.strictEqual(changed.status, 200, changed.text)
        assert.deepStrictEqual(changed.json().limits, { spend_micros: 10_000, tokens: null, runs_per_minute: 60, period: "total" })
        assert.deepStrictEqual((yield* getKey(secret, key.id)).limits, changed.json().limits)
        expect(yield* patchKey(secret, "key_00000000000000000000000000000000", { tokens: 1 }), 404, "key_not_found", "unknown")
        assert.strictEqual((yield* call("PATCH", `/v1/keys/${key.id}`, { secret, body: { limits: { tokens: -5 } } })).status, 422)
        assert.strictEqual((yield* call("PATCH", `/v1/keys/${key.id}`, { secret, body: {} })).status, 422)
        assert.strictEqual((yield* call("DELETE", `/v1/keys/${key.id}`, { secret })).status, 200)
        expect(yield* patchKey(secret, key.id, { tokens: 1 }), 409, "key_revoked", "revoked")
      }))

    it.effect("PATCH follows the scope-containment rule of rotate and revoke, and needs keys_write", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const writer = yield* seedKey(organization.organizationId, organization.ownerId, ["keys_write", "runs_write"])
        const reader = yield* seedKey(organization.organizationId, organization.ownerId, ["keys_read"])
        const owner = yield* call("GET", "/v1/keys", { secret: organization.secret })
        const ownerKey = owner.json().keys.find((key: any) => key.scopes.length === 9)
        const wider = yield* patchKey(writer.secret, ownerKey.id, { spend_micros: 0 })
        expect(wider, 403, "scope_denied", "a wider key")
        assert.include(wider.json().error.message, "changed")
        assert.isNull((yield* getKey(organization.secret, ownerKey.id)).limits.spend_micros, "the wider key is unchanged")
        expect(yield* patchKey(reader.secret, writer.id, { spend_micros: 0 }), 403, "scope_denied", "keys_read only")
        const runner = yield* seedKey(organization.organizationId, organization.ownerId, ["runs_write"])
        const within = yield* patchKey(writer.secret, runner.id, { spend_micros: 0 })
        assert.strictEqual(within.status, 200, within.text)
        assert.strictEqual(within.json().limits.spend_micros, 0)
      }))
  })

  describe("limit containment (limits_exceed_creator)", () => {
    const Own = { spend_micros: 1_000_000, tokens: 5_000, runs_per_minute: 10, period: "day" }
    const Fields = ["spend_micros", "tokens", "runs_per_minute"] as const

    /** A key with keys_write and the limits `Own`, made by the organization's owner key (which has none). */
    const limitedWriter = Effect.gen(function*() {
      const organization = yield* seedOrganization()
      const created = yield* call("POST", "/v1/keys", {
        secret: organization.secret,
        body: { name: "limited writer", scopes: ["keys_write", "keys_read", "runs_write", "runs_read"], limits: Own }
      })
      assert.strictEqual(created.status, 201, created.text)
      return { organization, writer: created.json() as { id: string; secret: string } }
    })

    const refusedNaming = (response: RawResponse, limit: string, what: string) => {
      expect(response, 403, "limits_exceed_creator", what)
      assert.match(response.json().error.message, new RegExp(`^${limit} `), what)
    }

    const keyCount = (secret: string) =>
      Effect.map(call("GET", "/v1/keys", { secret }), (response) => response.json().keys.length as number)

    it.effect("POST /v1/keys: each limit larger or null, or another period, is refused naming it; no key is made", () =>
      Effect.gen(function*() {
        const { organization, writer } = yield* limitedWriter
        const before = yield* keyCount(organization.secret)
        const post = (limits: Record<string, unknown> | undefined) =>
          call("POST", "/v1/keys", { secret: writer.secret, body: { name: "child", scopes: ["runs_write"], ...(limits === undefined ? {} : { limits }) } })
        refusedNaming(yield* post(undefined), "spend_micros", "no limits at all")
        for (const field of Fields) {
          refusedNaming(yield* post({ ...Own, [field]: Own[field] + 1 }), field, `${field} larger`)
          refusedNaming(yield* post({ ...Own, [field]: null }), field, `${field} null (none)`)
          const { [field]: _left, ...rest } = Own
          refusedNaming(yield* post(rest), field, `${field} left out (none)`)
        }
        for (const period of ["month", "total"]) {
          refusedNaming(yield* post({ ...Own, period }), "period", `period ${period}`)
        }
        const { period: _period, ...noPeriod } = Own
        refusedNaming(yield* post(noPeriod), "period", "period left out (month)")
        assert.strictEqual(yield* keyCount(organization.secret), before, "no refused key was made")
        const equal = yield* post(Own)
        assert.strictEqual(equal.status, 201, equal.text)
        assert.deepStrictEqual(equal.json().limits, Own)
        const tighter = yield* post({ spend_micros: 0, tokens: 1, runs_per_minute: 1, period: "day" })
        assert.strictEqual(tighter.status, 201, tighter.text)
      }))

    it.effect("PATCH on itself and on another key: looser is refused naming the limit, the stored limits unchanged", () =>
      Effect.gen(function*() {
        const { organization, writer } = yield* limitedWriter
        const other = yield* seedKey(organization.organizationId, organization.ownerId, ["runs_write"])
        for (const keyId of [writer.id, other.id]) {
          const stored = (yield* getKey(organization.secret, keyId)).limits
          for (const field of Fields) {
            refusedNaming(yield* patchKey(writer.secret, keyId, { ...Own, [field]: null }), field, `${keyId}: ${field} null`)
            refusedNaming(yield* patchKey(writer.secret, keyId, { ...Own, [field]: Own[field] * 2 }), field, `${keyId}: ${field} larger`)
          }
          refusedNaming(yield* patchKey(writer.secret, keyId, { ...Own, period: "total" }), "period", `${keyId}: period`)
          assert.deepStrictEqual((yield* getKey(organization.secret, keyId)).limits, stored, `${keyId}: unchanged after the refusals`)
        }
        // The other key has no limits: only a patch bringing every limit within the writer's is taken.
        refusedNaming(yield* patchKey(writer.secret, other.id, { tokens: 10 }), "spend_micros", "the other key's none left")
        const within = yield* patchKey(writer.secret, other.id, { ...Own, tokens: 10 })
        assert.strictEqual(within.status, 200, within.text)
        assert.deepStrictEqual(within.json().limits, { ...Own, tokens: 10 })
        const tightened = yield* patchKey(writer.secret, writer.id, { spend_micros: 500 })
        assert.strictEqual(tightened.status, 200, tightened.text)
        // Now bound by its tighter limit: the old one is looser.
        refusedNaming(yield* patchKey(writer.secret, writer.id, { spend_micros: Own.spend_micros }), "spend_micros", "back up")
        assert.strictEqual((yield* getKey(organization.secret, writer.id)).limits.spend_micros, 500)
      }))

    it.effect("a key without limits is not bound: it creates keys without limits and clears limits", () =>
      Effect.gen(function*() {
        const { organization, writer } = yield* limitedWriter
        const free = yield* createKey(organization.secret, {})
        const cleared = yield* patchKey(organization.secret, writer.id, { spend_micros: null, tokens: null, runs_per_minute: null, period: "total" })
        assert.strictEqual(cleared.status, 200, cleared.text)
        assert.deepStrictEqual(cleared.json().limits, { spend_micros: null, tokens: null, runs_per_minute: null, period: "total" })
        assert.isNull(free.limits.spend_micros)
        // Without limits of its own, the writer is no longer bound either.
        const child = yield* call("POST", "/v1/keys", { secret: writer.secret, body: { name: "child", scopes: ["runs_write"] } })
        assert.strictEqual(child.status, 201, child.text)
      }))
  })

  describe("admission", () => {
    it.effect("429 key_quota_exhausted once the key's spend cannot hold a ceiling; the organization's other keys run on", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const key = yield* createKey(organization.secret, { limits: { spend_micros: SPEND_CEILING_MICROS - 1 } })
        const refused = yield* postRun(key.secret, oneQuestion())
        expect(refused, 429, "key_quota_exhausted", "below one ceiling")
        assert.include(refused.json().error.message, `limit ${SPEND_CEILING_MICROS - 1} micro-USD`)
        assert.deepStrictEqual(yield* storedRuns(organization.organizationId), { runs: 0, held: 0 }, "nothing stored")
        expect(yield* postRun(organization.secret, oneQuestion()), 200, undefined, "another key of the organization")
        const tokens = yield* createKey(organization.secret, { limits: { tokens: 10 } })
        expect(yield* postRun(tokens.secret, oneQuestion()), 429, "key_quota_exhausted", "token reservation over the limit")
        const lifted = yield* patchKey(organization.secret, key.id, { spend_micros: null })
        assert.strictEqual(lifted.status, 200)
        expect(yield* postRun(key.secret, oneQuestion()), 200, undefined, "after the limit is cleared")
      }))

    it.effect("runs in flight hold their ceilings against the key: exactly N of 3N concurrent runs are admitted", () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        const organization = yield* seedOrganization()
        const key = yield* createKey(organization.secret, { limits: { spend_micros: 2 * SPEND_CEILING_MICROS } })
        yield* upstream.hold
        // The refusals answer at once; the admitted runs wait on the held upstream.
        const fibers = yield* burstWhileHeld(key.secret, Array.from({ length: 6 }, () => freshKey()))
        const during = yield* getKey(organization.secret, key.id)
        assert.strictEqual(during.usage.spend_reserved_micros, 2 * SPEND_CEILING_MICROS)
        assert.strictEqual(during.usage.spend_remaining_micros, 0)
        yield* upstream.release
        const answers = yield* Effect.forEach(fibers, Fiber.join)
        const statuses = answers.map((answer) => answer.status).sort()
        assert.deepStrictEqual(statuses, [200, 200, 429, 429, 429, 429])
        assert.deepStrictEqual(
          answers.filter((answer) => answer.status === 429).map(codeOf),
          ["key_quota_exhausted", "key_quota_exhausted", "key_quota_exhausted", "key_quota_exhausted"]
        )
        const sql = yield* SqlClient.SqlClient
        const [stored] = yield* sql<{ runs: number; cost: number; tokens: number }>`SELECT count(*)::int AS runs,
            COALESCE(sum(cost_micros), 0)::bigint AS cost, COALESCE(sum(input_tokens + output_tokens), 0)::bigint AS tokens
          FROM runs WHERE key_id = ${key.id}`
        assert.strictEqual(stored!.runs, 2)
        const after = yield* getKey(organization.secret, key.id)
        assert.strictEqual(after.usage.spend_reserved_micros, 0)
        assert.strictEqual(after.usage.spend_settled_micros, Number(stored!.cost))
        assert.strictEqual(after.usage.tokens_settled, Number(stored!.tokens))
        assert.isAbove(after.usage.tokens_settled, 0)
        assert.strictEqual(after.usage.spend_remaining_micros, 2 * SPEND_CEILING_MICROS - Number(stored!.cost))
      }))

    it.effect("a key known to have limits (its runs batched under its lock): exactly N of 5N concurrent runs are admitted", () =>
      Effect.gen(function*() {
        const upstream = yield* FakeUpstream
        const organization = yield* seedOrganization()
        const key = yield* createKey(organization.secret, { limits: { spend_micros: 100 * SPEND_CEILING_MICROS } })
        // A first run finds the key's limits: the process remembers the key and batches its later runs under its lock.
        expect(yield* postRun(key.secret, oneQuestion()), 200, undefined, "the first run")
        const settled = (yield* getKey(organization.secret, key.id)).usage.spend_settled_micros as number
        const N = 4
        assert.strictEqual((yield* patchKey(organization.secret, key.id, { spend_micros: settled + N * SPEND_CEILING_MICROS })).status, 200)
        yield* upstream.hold
        const fibers = yield* burstWhileHeld(key.secret, Array.from({ length: 5 * N }, () => freshKey()))
        const during = yield* getKey(organization.secret, key.id)
        assert.strictEqual(during.usage.spend_reserved_micros, N * SPEND_CEILING_MICROS, "N ceilings held, no more")
        yield* upstream.release
        const answers = yield* Effect.forEach(fibers, Fiber.join)
        assert.deepStrictEqual(
          answers.map((answer) => answer.status === 200 ? "200" : `${answer.status} ${codeOf(answer)}`).sort(),
          [...Array(N).fill("200"), ...Array(4 * N).fill("429 key_quota_exhausted")]
        )
        const sql = yield* SqlClient.SqlClient
        const [stored] = yield* sql<{ runs: number; cost: number }>`SELECT count(*)::int AS runs,
            COALESCE(sum(cost_micros), 0)::bigint AS cost FROM runs WHERE key_id = ${key.id}`
        assert.strictEqual(stored!.runs, N + 1)
        const after = yield* getKey(organization.secret, key.id)
        assert.strictEqual(after.usage.spend_reserved_micros, 0)
        assert.strictEqual(after.usage.spend_settled_micros, Number(stored!.cost))
      }))

    it.effect("429 key_rate_limited with Retry-After once runs_per_minute is spent; a router selection counts as a run", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const key = yield* createKey(organization.secret, { limits: { runs_per_minute: 2 } })
        const replayed = freshKey()
        expect(yield* postRun(key.secret, oneQuestion(), replayed), 200, undefined, "first")
        expect(yield* postRun(key.secret, oneQuestion()), 200, undefined, "second")
        const limited = yield* postRun(key.secret, oneQuestion())
        expect(limited, 429, "key_rate_limited", "third within the minute")
        const retryAfter = Number(limited.headers["retry-after"])
        assert.isTrue(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 30, `Retry-After ${limited.headers["retry-after"]}`)
        expect(yield* postRun(key.secret, oneQuestion(), replayed), 200, undefined, "a replay takes nothing from the bucket")
        const selector = yield* createKey(organization.secret, { limits: { runs_per_minute: 1 } })
        expect(yield* postRun(selector.secret, oneQuestion()), 200, undefined, "the selector's one run")
        const selection = yield* call("POST", "/v1/router/select", {
          secret: selector.secret,
          headers: { "idempotency-key": freshKey() },
          body: { prompt: "Write a haiku about autumn leaves" }
        })
        expect(selection, 429, "key_rate_limited", "a selection is a run of its key")
        assert.match(String(selection.headers["retry-after"]), /^[1-9][0-9]*$/)
        const sql = yield* SqlClient.SqlClient
        const [counted] = yield* sql<{ runs: number }>`SELECT count(*)::int AS runs FROM runs WHERE key_id = ${key.id}`
        assert.strictEqual(counted!.runs, 2, "refused runs are not stored")
      }))

    it.effect("the order: organization quota, then the key, then the idempotency conflict, then credit", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const key = yield* createKey(organization.secret, {})
        const used = freshKey()
        expect(yield* postRun(key.secret, oneQuestion(), used), 200, undefined, "the key's first run")
        assert.strictEqual((yield* patchKey(organization.secret, key.id, { spend_micros: 0 })).status, 200)
        expect(yield* postRun(key.secret, oneQuestion(), used), 200, undefined, "a replay before any limit")
        expect(yield* postRun(key.secret, oneQuestion({ state: "other" }), used), 429, "key_quota_exhausted", "key before conflict")
        yield* (yield* CreditStore).setBilling(organization.organizationId, true)
        expect(yield* postRun(key.secret, oneQuestion()), 429, "key_quota_exhausted", "key before credit")
        assert.strictEqual((yield* patchKey(organization.secret, key.id, { spend_micros: null })).status, 200)
        expect(yield* postRun(key.secret, oneQuestion()), 402, "insufficient_credits", "credit once the key allows")
        yield* (yield* QuotaLedger).setLimits(organization.organizationId, { spendLimitMicros: null, tokenLimit: 5 })
        assert.strictEqual((yield* patchKey(organization.secret, key.id, { spend_micros: 0 })).status, 200)
        expect(yield* postRun(key.secret, oneQuestion()), 429, "organization_token_quota_exhausted", "quota before the key")
      }))
  })

  describe("usage", () => {
    it.effect("a rotated key keeps its limits and usage; runs of other keys do not count", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const key = yield* createKey(organization.secret, { limits: { spend_micros: 1_000_000, tokens: 100_000 } })
        expect(yield* postRun(key.secret, oneQuestion()), 200, undefined, "a run")
        expect(yield* postRun(organization.secret, oneQuestion()), 200, undefined, "another key's run")
        const before = yield* getKey(organization.secret, key.id)
        assert.isAbove(before.usage.spend_settled_micros, 0)
        assert.strictEqual(
          before.usage.tokens_remaining,
          100_000 - before.usage.tokens_settled - before.usage.tokens_reserved
        )
        const rotated = yield* call("POST", `/v1/keys/${key.id}/rotate`, { secret: organization.secret })
        assert.strictEqual(rotated.status, 200)
        assert.deepStrictEqual(rotated.json().limits, before.limits)
        assert.deepStrictEqual(rotated.json().usage, before.usage)
        expect(yield* postRun(rotated.json().secret, oneQuestion()), 200, undefined, "a run with the new secret")
        const after = yield* getKey(organization.secret, key.id)
        assert.isAbove(after.usage.spend_settled_micros, before.usage.spend_settled_micros)
        const listed = (yield* call("GET", "/v1/keys", { secret: organization.secret })).json().keys
        assert.deepStrictEqual(listed.find((entry: any) => entry.id === key.id).usage, after.usage)
      }))

    it.effect("changing the period recounts the settled usage from the key's runs of the new period", () =>
      Effect.gen(function*() {
        const organization = yield* seedOrganization()
        const key = yield* createKey(organization.secret, { limits: { period: "month" } })
        expect(yield* postRun(key.secret, oneQuestion()), 200, undefined, "a run")
        const monthly = yield* getKey(organization.secret, key.id)
        const sql = yield* SqlClient.SqlClient
        // The run moved to yesterday: a daily period no longer counts it; the monthly or total one does.
        yield* sql`UPDATE runs SET created_at = created_at - interval '1 day' WHERE key_id = ${key.id}`
        yield* sql`UPDATE api_keys SET created_at = created_at - interval '2 days' WHERE id = ${key.id}`
        const daily = (yield* patchKey(organization.secret, key.id, { period: "day" })).json()
        assert.strictEqual(daily.usage.period_start_at, todayStart())
        assert.strictEqual(daily.usage.spend_settled_micros, 0)
        const total = (yield* patchKey(organization.secret, key.id, { period: "total" })).json()
        assert.strictEqual(total.usage.spend_settled_micros, monthly.usage.spend_settled_micros)
        assert.strictEqual(total.usage.tokens_settled, monthly.usage.tokens_settled)
      }))
  })
})

layer(TestServerWithConsoleLive(), { excludeTestServices: true, timeout: "60 seconds" })("key limits and console sessions", (it) => {
  it.effect("a console session is not bound by limit containment", () =>
    Effect.gen(function*() {
      const console = yield* FakeConsole
      const organization = yield* seedOrganization()
      const token = yield* console.sign({ sub: organization.ownerId, org_id: organization.organizationId })
      const limited = yield* createKey(organization.secret, { limits: { spend_micros: 1, tokens: 1, runs_per_minute: 1, period: "day" } })
      const free = yield* call("POST", "/v1/keys", { secret: token, body: { name: "free", scopes: ["runs_write"] } })
      assert.strictEqual(free.status, 201, free.text)
      const cleared = yield* patchKey(token, limited.id, { spend_micros: null, tokens: null, runs_per_minute: null, period: "total" })
      assert.strictEqual(cleared.status, 200, cleared.text)
    }))
})
