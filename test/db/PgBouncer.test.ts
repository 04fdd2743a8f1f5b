/**
 * Through a PgBouncer in transaction mode (`DATABASE_POOLER=transaction`), the test's own over fresh PostgreSQL
 * databases: clients migrating an empty database at once take turns on the migration lock (a transaction lock, so it
 * holds through the pooler, and none is left behind) and apply each file once; two server processes keep the ledger
 * exact (credit for exactly N ceilings admits exactly N of 10 x N concurrent runs over both processes) and idempotent
 * (one key sent to both processes at once makes one run, one upstream call, one charge), with every transaction of
 * the service going through PgBouncer, whose server sessions the processes' transactions share (no named statement,
 * no session setting, no session lock survives on one). PostgreSQL only (the embedded database has no pooler in front); skipped where PgBouncer is not installed,
 * except under CI=true, where a missing PgBouncer fails.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import pg from "pg"
import { migrate, readMigrations } from "../../src/db/Migrations.js"
import { pgClientLayer } from "../../src/db/PgPool.js"
import { ChildDatabaseUrl, ChildServers, ChildServersLive } from "../support/ChildServers.js"
import { FakeUpstream, heldBurst } from "../support/FakeUpstream.js"
import { assertMoneyInvariants, grantCredit } from "../support/Invariants.js"
import { pgBouncerInstalled, pgBouncerPath, startPgBouncer } from "../support/PgBouncer.js"
import { rawRequest, type RawResponse } from "../support/RawHttp.js"
import { freshKey, oneQuestion } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { adminQuery, databaseMode, postgresUrl } from "../support/TestDatabase.js"

const Ceiling = 20_000

const Processes = Layer.unwrap(
  Effect.map(FakeUpstream, (upstream) =>
    ChildServersLive({
      count: 2,
      viaPgBouncer: true,
      env: {
        DECISION_PROVIDER: "openai",
        DECISION_PROVIDER_URL: upstream.url,
        DECISION_PROVIDER_MODEL: "judge-7b",
        DECISION_PROVIDER_MAX_RETRIES: "0",
        DATABASE_POOL_SIZE: "6"
      }
    }))
).pipe(Layer.provideMerge(FakeUpstream.layer))

const post = (url: string, secret: string, body: unknown, key: string) =>
  rawRequest(url, {
    method: "POST",
    path: "/v1/runs",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify(body)
  })

const codeOf = (response: RawResponse): string | undefined => {
  try {
    return response.json().error?.code
  } catch {
    return undefined
  }
}

const count = (statuses: ReadonlyArray<number>) =>
  statuses.reduce<Record<number, number>>((counts, status) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }), {})

const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>, check: (value: A) => boolean) =>
  Effect.retry(Effect.filterOrFail(effect, check), Schedule.spaced("100 millis").pipe(Schedule.upTo({ duration: "30 seconds" })))

/** Transactions PgBouncer has carried for the children's database so far (its admin console's `SHOW STATS`). */
const bouncedTransactions = Effect.flatMap(ChildDatabaseUrl, (url) =>
  Effect.promise(async () => {
    const via = new URL(url!)
    const database = via.pathname.slice(1)
    via.pathname = "/pgbouncer"
    const client = new pg.Client({ connectionString: via.toString() })
    await client.connect()
    try {
      const stats = await client.query<{ database: string; total_xact_count: string }>("SHOW STATS")
      return Number(stats.rows.find((row) => row.database === database)?.total_xact_count ?? 0)
    } finally {
      await client.end()
    }
  }))

const postgres = databaseMode() === "postgres"
const installed = pgBouncerInstalled()
if (postgres && !installed && process.env.CI === "true") {
  throw new Error(`PgBouncer is not installed at ${pgBouncerPath()} (apt-get install pgbouncer, or set PGBOUNCER)`)
}
const reason = !postgres
  ? "PostgreSQL only (TEST_DATABASE_URL is not set)"
  : !installed
  ? `PgBouncer is not installed at ${pgBouncerPath()}`
  : undefined
const runnable = reason === undefined ? describe : describe.skip

/** An empty database (no migration applied), dropped afterwards. */
const emptyDatabase = Effect.acquireRelease(
  Effect.gen(function*() {
    const name = `arbiter_b_${randomBytes(6).toString("hex")}`
    yield* adminQuery(`CREATE DATABASE ${name} TEMPLATE template0`)
    const url = new URL(postgresUrl())
    url.pathname = `/${name}`
    return { name, url: url.toString() }
  }),
  ({ name }) => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).pipe(Effect.ignore)
)

runnable(`PgBouncer in transaction mode${reason === undefined ? "" : ` (skipped: ${reason})`}`, () => {
  it.live("four clients migrating an empty database together through it take turns: every file applied once", () =>
    Effect.gen(function*() {
      const database = yield* emptyDatabase
      const bouncer = yield* startPgBouncer(database.url)
      const clients = yield* Effect.forEach(Array.from({ length: 4 }), () =>
        Effect.map(
          Layer.build(pgClientLayer({ url: bouncer.through(database.url) }, { max: 2, pooler: "transaction" })),
          (context) => Context.get(context, SqlClient.SqlClient)
        ))
      const applied = yield* Effect.forEach(
        clients,
        (sql) => Effect.provideService(migrate(undefined, { takeTurns: true }), SqlClient.SqlClient, sql),
        { concurrency: "unbounded" }
      )
      const files = readMigrations()
      assert.strictEqual(applied.reduce((sum, each) => sum + each.length, 0), files.length, "each file applied by one client")
      const [row] = yield* clients[0]!<{ n: number; locks: number }>`SELECT
        (SELECT count(*)::int FROM effect_sql_migrations) AS n,
        (SELECT count(*)::int FROM pg_locks WHERE locktype = 'advisory'
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())) AS locks`
      assert.deepStrictEqual({ ...row }, { n: files.length, locks: 0 }, "no advisory lock outlives the migrations")
    }))

  layer(Processes, { excludeTestServices: true, timeout: "180 seconds" })("two processes through it", (it) => {
    it.effect("credit for exactly N ceilings, 10 x N concurrent runs over two processes: exactly N admitted, the rest 402", () =>
      Effect.gen(function*() {
        const children = yield* ChildServers
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        const before = yield* bouncedTransactions
        const N = 10
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, N * Ceiling)
        const { held, responses } = yield* heldBurst(
          Array.from({ length: 10 * N }, (_, index) =>
            post(children[index % children.length]!.url, organization.secret, oneQuestion(), freshKey()))
        )
        assert.strictEqual(held, N, "exactly N runs reached the model while the burst was held")
        assert.deepStrictEqual(count(responses.map((response) => response.status)), { 200: N, 402: 9 * N })
        for (const response of responses.filter((response) => response.status === 402)) {
          assert.strictEqual(codeOf(response), "insufficient_credits")
        }
        const sql = yield* SqlClient.SqlClient
        yield* eventually(sql<{ n: number }>`SELECT count(*)::int AS n FROM runs WHERE held`, ([row]) => row!.n === 0)
        yield* assertMoneyInvariants
        assert.isAbove((yield* bouncedTransactions) - before, 10 * N, "the processes' transactions went through PgBouncer")
      }))

    it.effect("one idempotency key sent to both processes at once: one run, one upstream call, one charge", () =>
      Effect.gen(function*() {
        const children = yield* ChildServers
        const upstream = yield* FakeUpstream
        yield* upstream.reset
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, 10 * Ceiling)
        const key = freshKey()
        yield* upstream.hold
        const first = yield* Effect.forkDetach(
          Effect.forEach(children, (child) => post(child.url, organization.secret, oneQuestion(), key), { concurrency: "unbounded" })
        )
        yield* eventually(upstream.requests, (requests) => requests.length >= 1)
        yield* upstream.release
        const responses = yield* Fiber.join(first)
        const statuses = responses.map((response) => response.status).sort()
        assert.deepStrictEqual(statuses.filter((status) => status !== 200 && status !== 202), [], responses.map((r) => r.text).join("\n"))
        assert.strictEqual(new Set(responses.map((response) => response.json().run_id)).size, 1, "one run")
        const again = yield* Effect.forEach(children, (child) => post(child.url, organization.secret, oneQuestion(), key))
        for (const response of again) {
          assert.strictEqual(response.status, 200, response.text)
          assert.isTrue(response.json().replayed)
        }
        assert.strictEqual((yield* upstream.requests).length, 1, "one upstream call; replays call nothing")
        const sql = yield* SqlClient.SqlClient
        const [charged] = yield* sql<{ runs: number; entries: number; usage: number }>`SELECT
          (SELECT count(*)::int FROM runs WHERE organization_id = ${organization.organizationId}) AS runs,
          (SELECT count(*)::int FROM ledger_entries WHERE organization_id = ${organization.organizationId}) AS entries,
          (SELECT COALESCE(-sum(amount_micros), 0)::int FROM credit_transactions
            WHERE organization_id = ${organization.organizationId} AND kind = 'usage') AS usage`
        assert.deepStrictEqual({ runs: charged!.runs, entries: charged!.entries }, { runs: 1, entries: 1 })
        assert.strictEqual(charged!.usage, again[0]!.json().cost_micros)
        yield* assertMoneyInvariants
      }))
  })
})
