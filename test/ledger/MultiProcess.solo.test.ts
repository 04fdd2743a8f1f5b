/**
 * The ledger across real server processes on real PostgreSQL (the embedded database has a single owner, so these
 * run on PostgreSQL only): exactly N runs admitted against credit for N ceilings from three processes at once (no
 * more, and no fewer: unused slices are reclaimed before a refusal); one idempotency key sent to three processes at
 * once makes one upstream call and one charge; a SIGKILLed process's holds and leases come back within the lease
 * TTL; PostgreSQL unreachable through a proxy mid-load answers contract errors, charges nothing twice and recovers;
 * a settlement PostgreSQL refuses for one run leaves its batch neighbours settled and still bills the run; an outage
 * longer than the deadlines bills every answered call once it ends, and no caller told 504 finds its run completed.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Fiber, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { rawRequest, type RawResponse } from "../support/RawHttp.js"
import { ChildServers, ChildServersLive, DatabaseProxy } from "../support/ChildServers.js"
import { FakeUpstream, heldBurst } from "../support/FakeUpstream.js"
import { assertMoneyInvariants, grantCredit } from "../support/Invariants.js"
import { freshKey, oneQuestion } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { databaseMode } from "../support/TestDatabase.js"

const Ceiling = 20_000

/** Children answering decisions through the fake upstream, with a short lease TTL. */
const Processes = (count: number, viaProxy = false) =>
  Layer.unwrap(
    Effect.map(FakeUpstream, (upstream) =>
      ChildServersLive({
        count,
        viaProxy,
        env: {
          DECISION_PROVIDER: "openai",
          DECISION_PROVIDER_URL: upstream.url,
          DECISION_PROVIDER_MODEL: "judge-7b",
          DECISION_PROVIDER_MAX_RETRIES: "0",
          LEDGER_LEASE_TTL_SECONDS: "3"
        }
      }))
  ).pipe(Layer.provideMerge(FakeUpstream.layer))

const post = (url: string, secret: string, body: unknown, key: string, path = "/v1/runs") =>
  rawRequest(url, {
    method: "POST",
    path,
    headers: {
      authorization: `Bearer ${secret}`,
      "content-type": "application/json",
      ...(path === "/v1/runs" ? { "idempotency-key": key } : {})
    },
    body: JSON.stringify(body)
  })

const codeOf = (response: RawResponse): string | undefined => {
  try {
    return response.json().error?.code
  } catch {
    return undefined
  }
}

const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>, check: (value: A) => boolean, seconds = 30) =>
  Effect.retry(Effect.filterOrFail(effect, check), Schedule.spaced("100 millis").pipe(Schedule.upTo({ duration: `${seconds} seconds` })))

const count = (statuses: ReadonlyArray<number>) =>
  statuses.reduce<Record<number, number>>((counts, status) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }), {})

const heldRuns = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM runs WHERE held`, ([row]) => row!.n))

/** `count` one-question runs sent round-robin to the processes while the upstream holds every call (heldBurst). */
const burstOver = (children: ReadonlyArray<{ readonly url: string }>, secret: string, count: number) =>
  heldBurst(Array.from({ length: count }, (_, index) => post(children[index % children.length]!.url, secret, oneQuestion(), freshKey())))

/** A key that may run decisions, with a spend limit (micro-USD a month). */
const createLimitedKey = (url: string, secret: string, spendMicros: number) =>
  Effect.flatMap(
    post(url, secret, { name: "limited", scopes: ["runs_write"], limits: { spend_micros: spendMicros } }, "", "/v1/keys"),
    (response) =>
      Effect.sync(() => {
        assert.strictEqual(response.status, 201, response.text)
        return response.json() as { id: string; secret: string }
      })
  )

const postgresOnly = databaseMode() === "postgres" ? describe : describe.skip

postgresOnly("the ledger across processes (PostgreSQL)", () => {
  layer(Processes(3), { excludeTestServices: true, timeout: "180 seconds" })("three processes", (it) => {
    it.effect("credit for exactly N ceilings, 10 x N concurrent runs over three processes: exactly N admitted, the rest 402", () =>
      Effect.gen(function*() {
        const children = yield* ChildServers
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        const N = 10
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, N * Ceiling)
        const { held, responses } = yield* burstOver(children, organization.secret, 10 * N)
        assert.strictEqual(held, N, "exactly N runs reached the model while the burst was held")
        assert.deepStrictEqual(count(responses.map((response) => response.status)), { 200: N, 402: 9 * N })
        for (const response of responses.filter((response) => response.status === 402)) {
          assert.strictEqual(codeOf(response), "insufficient_credits")
        }
        assert.strictEqual(yield* heldRuns, 0)
        yield* assertMoneyInvariants
      }))

    it.effect("one key's spend limit of exactly N ceilings, 10 x N concurrent runs over three processes: exactly N admitted", () =>
      Effect.gen(function*() {
        const children = yield* ChildServers
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        const N = 6
        const organization = yield* seedOrganization()
        const created = yield* createLimitedKey(children[0]!.url, organization.secret, N * Ceiling)
        const { held, responses } = yield* burstOver(children, created.secret, 10 * N)
        assert.strictEqual(held, N, "exactly N runs of the key reached the model while the burst was held")
        assert.deepStrictEqual(count(responses.map((response) => response.status)), { 200: N, 429: 9 * N })
        for (const response of responses.filter((response) => response.status === 429)) {
          assert.strictEqual(codeOf(response), "key_quota_exhausted")
        }
        const sql = yield* SqlClient.SqlClient
        const [stored] = yield* sql<{ runs: number }>`SELECT count(*)::int AS runs FROM runs WHERE key_id = ${created.id}`
        assert.strictEqual(stored!.runs, N)
        assert.strictEqual(yield* heldRuns, 0)
        yield* assertMoneyInvariants
      }))

    it.effect("a key every process knows has limits (its runs batched under its lock), 10 x N concurrent runs over three processes: exactly N admitted", () =>
      Effect.gen(function*() {
        const children = yield* ChildServers
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        const N = 6
        const organization = yield* seedOrganization()
        const created = yield* createLimitedKey(children[0]!.url, organization.secret, 100 * Ceiling)
        // One run through each process: each finds the key's limits and batches the key's later runs under its lock.
        for (const child of children) {
          const warm = yield* post(child.url, created.secret, oneQuestion(), freshKey())
          assert.strictEqual(warm.status, 200, warm.text)
        }
        const sql = yield* SqlClient.SqlClient
        const [settled] = yield* sql<{ micros: number }>`SELECT spend_settled_micros::bigint AS micros FROM key_accounts
          WHERE key_id = ${created.id}`
        yield* sql`UPDATE key_accounts SET spend_limit_micros = ${Number(settled!.micros) + N * Ceiling}
          WHERE key_id = ${created.id}`
        yield* upstream.reset
        const { held, responses } = yield* burstOver(children, created.secret, 10 * N)
        assert.strictEqual(held, N, "exactly N runs of the key reached the model while the burst was held")
        assert.deepStrictEqual(count(responses.map((response) => response.status)), { 200: N, 429: 9 * N })
        for (const response of responses.filter((response) => response.status === 429)) {
          assert.strictEqual(codeOf(response), "key_quota_exhausted")
        }
        const [stored] = yield* sql<{ runs: number }>`SELECT count(*)::int AS runs FROM runs WHERE key_id = ${created.id}`
        assert.strictEqual(stored!.runs, N + children.length)
        assert.strictEqual(yield* heldRuns, 0)
        yield* assertMoneyInvariants
      }))

    it.effect("one idempotency key sent to three processes at once: one upstream call, one charge, the others replay", () =>
      Effect.gen(function*() {
        const children = yield* ChildServers
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, 10 * Ceiling)
        const key = freshKey()
        yield* upstream.hold
        const first = yield* Effect.forkDetach(Effect.forEach(children, (child) => post(child.url, organization.secret, oneQuestion(), key), {
          concurrency: "unbounded"
        }))
        yield* eventually(upstream.requests, (requests) => requests.length >= 1)
        yield* Effect.sleep("500 millis")
        yield* upstream.release
        const responses = yield* Fiber.join(first)
        assert.strictEqual((yield* upstream.requests).length, 1, "one upstream call")
        const statuses = responses.map((response) => response.status).sort()
        assert.deepStrictEqual(statuses, [200, 202, 202], "the run, and two replays of it while pending")
        const runIds = new Set(responses.map((response) => response.json().run_id))
        assert.strictEqual(runIds.size, 1)
        for (const response of responses.filter((response) => response.status === 202)) {
          assert.isTrue(response.json().replayed)
          assert.strictEqual(response.json().state, "pending")
        }
        const again = yield* Effect.forEach(children, (child) => post(child.url, organization.secret, oneQuestion(), key))
        for (const response of again) {
          assert.strictEqual(response.status, 200)
          assert.isTrue(response.json().replayed)
        }
        assert.strictEqual((yield* upstream.requests).length, 1, "replays call nothing")
        const sql = yield* SqlClient.SqlClient
        const [charged] = yield* sql<{ runs: number; entries: number; usage: number }>`SELECT
          (SELECT count(*)::int FROM runs WHERE organization_id = ${organization.organizationId}) AS runs,
          (SELECT count(*)::int FROM ledger_entries WHERE organization_id = ${organization.organizationId}) AS entries,
          (SELECT COALESCE(-sum(amount_micros), 0)::int FROM credit_transactions
            WHERE organization_id = ${organization.organizationId} AND kind = 'usage') AS usage`
        assert.deepStrictEqual({ runs: charged!.runs, entries: charged!.entries }, { runs: 1, entries: 1 })
        assert.strictEqual(charged!.usage, responses.find((response) => response.status === 200)!.json().cost_micros)
        yield* assertMoneyInvariants
      }))
  })

  layer(Processes(3), { excludeTestServices: true, timeout: "180 seconds" })("a process killed", (it) => {
    it.effect("SIGKILL mid-load: within the lease TTL its holds and leases come back; every settled run is debited once", () =>
      Effect.gen(function*() {
        const children = yield* ChildServers
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        yield* upstream.setLatency(50)
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, 1_000 * Ceiling)
        const stopAt = Date.now() + 3_000
        const loop = (url: string) =>
          Effect.gen(function*() {
            while (Date.now() < stopAt) {
              yield* Effect.result(post(url, organization.secret, oneQuestion(), freshKey()))
            }
          })
        const load = yield* Effect.forkDetach(Effect.forEach(
          Array.from({ length: 24 }, (_, index) => children[index % 3]!.url),
          loop,
          { concurrency: "unbounded", discard: true }
        ))
        yield* Effect.sleep("1 second")
        children[2]!.process.kill("SIGKILL")
        yield* Fiber.join(load)
        const sql = yield* SqlClient.SqlClient
        const [before] = yield* sql<{ holders: number }>`SELECT count(*)::int AS holders FROM ledger_holders`
        assert.strictEqual(before!.holders, 3, "the killed process's holder is still there")
        yield* eventually(
          Effect.map(
            sql<{ holders: number; held: number; leased: number }>`SELECT
              (SELECT count(*)::int FROM ledger_holders) AS holders,
              (SELECT count(*)::int FROM runs WHERE held) AS held,
              (SELECT count(*)::int FROM ledger_leases l WHERE NOT EXISTS (SELECT 1 FROM ledger_holders h WHERE h.id = l.holder)) AS leased`,
            ([row]) => row!
          ),
          (row) => row.holders === 2 && row.held === 0 && row.leased === 0,
          20
        ).pipe(Effect.tapError(() => Effect.gen(function*() {
          console.error(JSON.stringify({
            holders: yield* sql`SELECT id, heartbeat_at, now() AS now FROM ledger_holders`,
            leases: yield* sql`SELECT holder, credit_micros, credit_held, revoked FROM ledger_leases`,
            held: yield* sql`SELECT id, holder, lease_id, state FROM runs WHERE held`
          }, null, 1))
          for (const child of children.slice(0, 2)) console.error(child.output().slice(-3_000))
        })))
        yield* assertMoneyInvariants
      }))
  })

  layer(Processes(1, true), { excludeTestServices: true, timeout: "180 seconds" })("PostgreSQL failures", (it) => {
    it.effect("unreachable for a few seconds mid-load: contract errors, nothing answered 200 unstored, recovery", () =>
      Effect.gen(function*() {
        const [child] = yield* ChildServers
        const proxy = yield* DatabaseProxy
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        yield* upstream.setLatency(20)
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, 1_000 * Ceiling)
        const answers: Array<RawResponse> = []
        const stopAt = Date.now() + 6_000
        const load = yield* Effect.forkDetach(Effect.forEach(Array.from({ length: 8 }), () =>
          Effect.gen(function*() {
            while (Date.now() < stopAt) {
              answers.push(yield* post(child!.url, organization.secret, oneQuestion(), freshKey()).pipe(
                Effect.tapError(() => Effect.sync(() => console.error(child!.output().slice(-4_000))))
              ))
            }
          }), { concurrency: "unbounded", discard: true }))
        yield* Effect.sleep("1500 millis")
        proxy.cut()
        const cutAt = Date.now()
        // The looping clients may all be waiting on runs admitted before the cut (their settlements retry until the
        // database is back), so new runs are also sent while it is away: each must be refused in the contract's words.
        yield* Effect.sleep("300 millis")
        for (let probe = 0; probe < 3; probe++) {
          const refused = yield* post(child!.url, organization.secret, oneQuestion(), freshKey())
          assert.deepStrictEqual([refused.status, codeOf(refused)], [503, "database_unavailable"], refused.text)
          answers.push(refused)
          yield* Effect.sleep("200 millis")
        }
        yield* Effect.sleep(Math.max(0, 3_000 - (Date.now() - cutAt)))
        proxy.restore()
        yield* Fiber.join(load)
        const sql = yield* SqlClient.SqlClient
        yield* eventually(heldRuns, (held) => held === 0).pipe(Effect.tapError(() => Effect.gen(function*() {
          console.error(JSON.stringify(yield* sql`SELECT id, state, held, holder, lease_id, created_at, deadline_at FROM runs WHERE held`))
          console.error(child!.output().slice(-6000))
        })))
        const statuses = count(answers.map((response) => response.status))
        assert.includeMembers(["200", "503", "504"], Object.keys(statuses), JSON.stringify(statuses))
        assert.isAbove(statuses[503] ?? 0, 0, "the outage was seen")
        for (const response of answers.filter((response) => response.status !== 200)) {
          assert.include(["database_unavailable", "deadline_exceeded"], codeOf(response))
        }
        for (const response of answers.filter((response) => response.status === 200)) {
          const body = response.json()
          const [stored] = yield* sql<{ state: string; cost_micros: number }>`SELECT state, cost_micros FROM runs
            WHERE id = ${body.run_id.slice(4)}::uuid`
          assert.deepStrictEqual(stored, { state: "completed", cost_micros: body.cost_micros })
        }
        const after = yield* post(child!.url, organization.secret, oneQuestion(), freshKey())
        assert.strictEqual(after.status, 200, "recovered without a restart")
        yield* assertMoneyInvariants
      }))

    it.effect("a settlement PostgreSQL refuses for one run: its batch neighbours settle, its calls are still billed", () =>
      Effect.gen(function*() {
        const [child] = yield* ChildServers
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe(`CREATE OR REPLACE FUNCTION test_poison() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN IF NEW.output::text LIKE '%"poison"%' THEN RAISE EXCEPTION 'poisoned output'; END IF; RETURN NEW; END $$`)
        yield* sql.unsafe("CREATE TRIGGER test_poison BEFORE UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION test_poison()")
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, 100 * Ceiling)
        yield* upstream.hold
        const poison = { ...oneQuestion(), questions: { poison: { type: "noul", instructions: "Is it poisoned?" } } }
        const bodies = [poison, ...Array.from({ length: 9 }, (_, index) => oneQuestion({ state: `ticket ${index}` }))]
        const sent = yield* Effect.forkDetach(Effect.forEach(bodies, (body) => post(child!.url, organization.secret, body, freshKey()), {
          concurrency: "unbounded"
        }))
        yield* eventually(upstream.requests, (requests) => requests.length >= bodies.length)
        yield* upstream.release
        const responses = yield* Fiber.join(sent)
        yield* sql.unsafe("DROP TRIGGER test_poison ON runs")
        assert.strictEqual(responses[0]!.status, 500, responses[0]!.text)
        assert.strictEqual(codeOf(responses[0]!), "internal_error")
        for (const response of responses.slice(1)) assert.strictEqual(response.status, 200, response.text)
        const [stored] = yield* sql<{ state: string; error_code: string; cost_micros: number; entries: number; billed: boolean }>`
          SELECT r.state, r.error_code, r.cost_micros,
            (SELECT count(*)::int FROM ledger_entries l WHERE l.run_id = r.id) AS entries,
            (SELECT bool_and(billed) FROM ledger_entries l WHERE l.run_id = r.id) AS billed
          FROM runs r WHERE r.organization_id = ${organization.organizationId} AND r.output IS NULL`
        assert.strictEqual(stored!.state, "failed")
        assert.strictEqual(stored!.error_code, "internal_error")
        assert.strictEqual(stored!.entries, 1)
        assert.isTrue(stored!.billed)
        assert.isAbove(stored!.cost_micros, 0, "its upstream cost is recorded")
        yield* assertMoneyInvariants
      }))

    it.effect("unreachable longer than the deadlines while calls are answered: every call billed, no 504 stored completed", () =>
      Effect.gen(function*() {
        const [child] = yield* ChildServers
        const proxy = yield* DatabaseProxy
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        yield* upstream.setLatency(300)
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, 100 * Ceiling)
        const keys = Array.from({ length: 10 }, () => freshKey())
        const sent = yield* Effect.forkDetach(Effect.forEach(keys, (key) =>
          post(child!.url, organization.secret, { ...oneQuestion(), deadline_ms: 3_000 }, key), { concurrency: "unbounded" }))
        yield* eventually(upstream.requests, (requests) => requests.length >= keys.length)
        proxy.cut()
        const responses = yield* Fiber.join(sent)
        yield* Effect.sleep("5 seconds")
        proxy.restore()
        const sql = yield* SqlClient.SqlClient
        yield* eventually(heldRuns, (held) => held === 0)
        const answered = (yield* upstream.requests).length
        const [ledger] = yield* sql<{ entries: number; unbilled: number }>`SELECT count(*)::int AS entries,
            count(*) FILTER (WHERE NOT billed)::int AS unbilled
          FROM ledger_entries WHERE organization_id = ${organization.organizationId}`
        assert.deepStrictEqual(ledger, { entries: answered, unbilled: 0 }, "every answered call recorded and billed")
        for (const [index, response] of responses.entries()) {
          const [run] = yield* sql<{ state: string }>`SELECT state FROM runs
            WHERE organization_id = ${organization.organizationId} AND idempotency_key = ${keys[index]!}`
          if (response.status === 200) assert.strictEqual(run!.state, "completed")
          else {
            assert.include([503, 504], response.status)
            assert.notStrictEqual(run?.state, "completed", `a ${response.status} answer, a run stored completed`)
          }
        }
        assert.isAbove(responses.filter((response) => response.status === 504).length, 0, "the deadline answered")
        yield* assertMoneyInvariants
      }))
  })
})
