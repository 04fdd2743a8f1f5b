/**
 * The schema and the ledger against docs/scaling.md's distribution by organization, read from the migrated database's
 * catalogs (PostgreSQL and PGlite alike): every table is declared there, distributed by its organization column or a
 * reference table; every foreign key between distributed tables includes the organization on both sides, and none
 * goes from a reference table to a distributed one; the unique keys without the organization are exactly those the
 * document lists as still to change. Then the ledger's transactions: concurrent runs of several organizations with
 * `LEDGER_BATCHES=organization`, under triggers logging every row change with its transaction and organization, and
 * no transaction changed rows of two organizations (a control transaction over two proves the check sees one).
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { readFileSync } from "node:fs"
import { ServerAddress } from "../../src/server/Listen.js"
import { FakeUpstream, heldBurst } from "../support/FakeUpstream.js"
import { assertMoneyInvariants, grantCredit } from "../support/Invariants.js"
import { rawRequest } from "../support/RawHttp.js"
import { freshKey, oneQuestion } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerWithUpstreamLive } from "../support/TestServer.js"

const scaling = readFileSync(new URL("../../docs/scaling.md", import.meta.url), "utf8")

/** The rows of the markdown table under `heading` in docs/scaling.md, as cells with their backquotes removed. */
const tableUnder = (heading: string): ReadonlyArray<ReadonlyArray<string>> => {
  const start = scaling.indexOf(`\n${heading}\n`)
  assert.isAtLeast(start, 0, `docs/scaling.md has a section "${heading}"`)
  const rest = scaling.slice(start + heading.length + 2)
  const end = rest.search(/\n#{1,4} /)
  const rows = (end < 0 ? rest : rest.slice(0, end)).split("\n").filter((line) => line.startsWith("| "))
  return rows.slice(1).map((line) => line.split("|").slice(1, -1).map((cell) => cell.trim().replaceAll("`", "")))
}

interface Declared {
  readonly kind: "distributed" | "reference"
  readonly column: string | undefined
}

const declaredTables = (): ReadonlyMap<string, Declared> =>
  new Map(tableUnder("### Tables").map(([table, kind, column]) => [
    table!,
    { kind: kind as Declared["kind"], column: column === "—" ? undefined : column }
  ]))

const tablesQuery = `SELECT c.relname AS name,
    ARRAY(SELECT a.attname::text FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped)
      AS columns
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY c.relname`

const foreignKeysQuery = `SELECT con.conname AS name, src.relname AS "from", dst.relname AS "to",
    ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(num, ord)
      JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.num ORDER BY k.ord) AS from_columns,
    ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(num, ord)
      JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.num ORDER BY k.ord) AS to_columns
  FROM pg_constraint con
  JOIN pg_class src ON src.oid = con.conrelid JOIN pg_namespace n ON n.oid = src.relnamespace
  JOIN pg_class dst ON dst.oid = con.confrelid
  WHERE con.contype = 'f' AND n.nspname = 'public' ORDER BY con.conname`

const uniqueKeysQuery = `SELECT ic.relname AS name, t.relname AS "table",
    ARRAY(SELECT a.attname::text FROM unnest(i.indkey) WITH ORDINALITY k(num, ord)
      JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.num ORDER BY k.ord) AS columns
  FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
  JOIN pg_namespace n ON n.oid = t.relnamespace
  WHERE i.indisunique AND n.nspname = 'public' ORDER BY ic.relname`

interface ForeignKey {
  readonly name: string
  readonly from: string
  readonly to: string
  readonly from_columns: ReadonlyArray<string>
  readonly to_columns: ReadonlyArray<string>
}

/** What breaks the rules of docs/scaling.md in a foreign key, if anything. */
export const foreignKeyProblem = (key: ForeignKey, tables: ReadonlyMap<string, Declared>): string | undefined => {
  const from = tables.get(key.from)
  const to = tables.get(key.to)
  if (from === undefined || to === undefined) return `${key.name}: ${key.from} -> ${key.to} names an undeclared table`
  if (from.kind === "reference" && to.kind === "distributed") {
    return `${key.name}: the reference table ${key.from} references the distributed ${key.to}`
  }
  if (from.kind !== "distributed" || to.kind !== "distributed") return undefined
  const paired = key.from_columns.some((column, index) => column === from.column && key.to_columns[index] === to.column)
  return paired
    ? undefined
    : `${key.name}: ${key.from} (${key.from_columns.join(", ")}) -> ${key.to} (${key.to_columns.join(", ")}) does not ` +
      `pair ${key.from}.${from.column} with ${key.to}.${to.column}: it could join two organizations`
}

const post = (url: string, secret: string) =>
  rawRequest(url, {
    method: "POST",
    path: "/v1/runs",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", "idempotency-key": freshKey() },
    body: JSON.stringify(oneQuestion())
  })

/**
 * Triggers on every distributed table logging each row change (its transaction, its organization) into a table of a
 * schema of its own (outside `public`, so the schema checks never see it).
 */
const installChangeLog = (tables: ReadonlyMap<string, Declared>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.gen(function*() {
      yield* sql.unsafe(`CREATE SCHEMA distribution_check;
        CREATE TABLE distribution_check.changes (xid bigint NOT NULL, organization text, tbl text NOT NULL);
        CREATE FUNCTION distribution_check.log_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO distribution_check.changes VALUES (txid_current(),
            CASE WHEN TG_OP = 'DELETE' THEN to_jsonb(OLD) ELSE to_jsonb(NEW) END ->> TG_ARGV[0], TG_TABLE_NAME);
          RETURN NULL;
        END $$`)
      for (const [table, declared] of tables) {
        if (declared.kind !== "distributed") continue
        yield* sql.unsafe(`CREATE TRIGGER distribution_check AFTER INSERT OR UPDATE OR DELETE ON public.${table}
          FOR EACH ROW EXECUTE FUNCTION distribution_check.log_change('${declared.column}')`)
      }
    }))

/**
 * Transactions that changed rows of more than one organization, with the organizations and tables. One kind is not a
 * run's and is left out, as docs/scaling.md says: the background flush of keys' `last_used_at`, which changes
 * `api_keys` alone.
 */
const spanningTransactions = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ xid: string; organizations: ReadonlyArray<string>; tables: ReadonlyArray<string> }>`SELECT xid::text AS xid,
      array_agg(DISTINCT organization) AS organizations, array_agg(DISTINCT tbl) AS tables
    FROM distribution_check.changes GROUP BY xid
    HAVING count(DISTINCT organization) > 1 AND array_agg(DISTINCT tbl) <> ARRAY['api_keys']`)

layer(TestServerWithUpstreamLive({ ledgerBatches: "organization" }), { excludeTestServices: true, timeout: "180 seconds" })(
  "distribution by organization (docs/scaling.md)",
  (it) => {
    describe("the schema", () => {
      it.effect("every table is declared, distributed by the column it has, or a reference table", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const tables = declaredTables()
          const actual = yield* sql.unsafe<{ name: string; columns: ReadonlyArray<string> }>(tablesQuery)
          assert.deepStrictEqual(
            actual.map((table) => table.name).sort(),
            [...tables.keys()].sort(),
            "docs/scaling.md, Tables, lists exactly the schema's tables"
          )
          for (const table of actual) {
            const declared = tables.get(table.name)!
            if (declared.kind === "distributed") {
              assert.include(table.columns, declared.column!, `${table.name} has its distribution column`)
            } else {
              assert.strictEqual(declared.kind, "reference", `${table.name} is distributed or a reference table`)
              assert.notInclude(table.columns, "organization_id", `${table.name}, a reference table, holds no organization's rows`)
            }
          }
        }))

      it.effect("every foreign key between distributed tables includes the organization on both sides", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const tables = declaredTables()
          const keys = yield* sql.unsafe<ForeignKey>(foreignKeysQuery)
          assert.isAbove(keys.length, 10)
          assert.deepStrictEqual(keys.flatMap((key) => foreignKeyProblem(key, tables) ?? []), [])
        }))

      it.effect("the check fails on a foreign key that could join two organizations", () =>
        Effect.sync(() => {
          const tables = declaredTables()
          const crossing = { name: "x", from: "ledger_entries", to: "runs", from_columns: ["run_id"], to_columns: ["id"] }
          assert.match(foreignKeyProblem(crossing, tables) ?? "", /could join two organizations/)
          const swapped = {
            name: "y",
            from: "ledger_entries",
            to: "runs",
            from_columns: ["organization_id", "run_id"],
            to_columns: ["id", "organization_id"]
          }
          assert.match(foreignKeyProblem(swapped, tables) ?? "", /could join two organizations/)
          const fromReference = { name: "z", from: "ledger_holders", to: "organizations", from_columns: ["id"], to_columns: ["id"] }
          assert.match(foreignKeyProblem(fromReference, tables) ?? "", /reference table/)
        }))

      it.effect("the unique keys without the organization are exactly those docs/scaling.md lists as still to change", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const tables = declaredTables()
          const unique = yield* sql.unsafe<{ name: string; table: string; columns: ReadonlyArray<string> }>(uniqueKeysQuery)
          const lacking = unique.filter((key) => {
            const declared = tables.get(key.table)
            return declared?.kind === "distributed" && !key.columns.includes(declared.column!)
          })
          const listed = tableUnder("### What would still need to change").map(([name, columns]) => `${name} ${columns}`)
          assert.deepStrictEqual(
            lacking.map((key) => `${key.name} ${key.table} (${key.columns.join(", ")})`).sort(),
            [...listed].sort()
          )
        }))
    })

    it.effect("with LEDGER_BATCHES=organization, no transaction of concurrent runs of several organizations changes two organizations' rows", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const address = yield* ServerAddress
        const upstream = yield* FakeUpstream
        yield* installChangeLog(declaredTables())
        const organizations = yield* Effect.forEach([1, 2, 3, 4], () => seedOrganization({ billing: true }))
        for (const organization of organizations) yield* grantCredit(organization.organizationId, 5 * 20_000)
        yield* upstream.reset
        // 8 runs per organization against credit for 5: admission's batches fill while the upstream holds the
        // first runs, then the answered runs settle at once.
        const { responses } = yield* heldBurst(
          Array.from({ length: 32 }, (_, index) => post(address.url, organizations[index % 4]!.secret))
        )
        assert.deepStrictEqual(
          [...new Set(responses.map((response) => response.status))].sort(),
          [200, 402],
          responses.map((response) => `${response.status} ${response.text}`).join("\n")
        )
        yield* Effect.retry(
          Effect.filterOrFail(sql<{ n: number }>`SELECT count(*)::int AS n FROM runs WHERE held`, ([row]) => row!.n === 0),
          Schedule.spaced("100 millis").pipe(Schedule.upTo({ duration: "30 seconds" }))
        )
        yield* assertMoneyInvariants
        const [logged] = yield* sql<{ transactions: number; organizations: number }>`SELECT
          count(DISTINCT xid)::int AS transactions, count(DISTINCT organization)::int AS organizations
          FROM distribution_check.changes`
        assert.isAtLeast(logged!.organizations, 4, "every organization's runs were logged")
        assert.isAbove(logged!.transactions, 8)
        assert.deepStrictEqual(yield* spanningTransactions, [], "no transaction changed rows of two organizations")

        // The control: a transaction over two organizations is seen.
        const [first, second] = organizations
        const xid = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`UPDATE credit_accounts SET balance_micros = balance_micros
            WHERE organization_id IN (${first!.organizationId}, ${second!.organizationId})`
          const [row] = yield* sql<{ xid: string }>`SELECT txid_current()::text AS xid`
          return row!.xid
        }))
        assert.deepStrictEqual((yield* spanningTransactions).map((row) => row.xid), [xid])
      }))
  }
)
