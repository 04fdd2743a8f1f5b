/**
 * The ledger's audit: its money invariants (`rules`), checked against one consistent snapshot of the stored rows (a
 * read-only, repeatable-read transaction, so every settlement is seen whole or not at all). Each check names its rule,
 * how many rows break it and a few of them; a healthy ledger breaks none, whether runs are in flight or not. Beside
 * the checks it reports what is in flight and what deserves an operator's look without breaking a rule (runs holding
 * long past their deadline, server processes whose heartbeat stopped, autovacuum off). The operator CLI's
 * `ledger audit` prints it; the tests assert it after their runs (test/support/Invariants.ts). It reads every run and
 * call of the organizations it audits: on a large database, audit one organization, or run it on a replica.
 */
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/** One rule: how many rows break it, and the first few of them. */
interface AuditCheck {
  readonly name: string
  readonly rule: string
  readonly violations: number
  readonly examples: ReadonlyArray<Record<string, unknown>>
}

/** How many example rows a check reports. */
const ExampleRows = 5

/** How long past its deadline a run may still hold before the audit points at it. */
const LateHoldSeconds = 300

/** Each rule, with the query of the rows breaking it for `$1` the organization (null: all). */
const rules = [
  {
    name: "balance_equals_transactions",
    rule: "every balance is the sum of its credit transactions",
    query: `SELECT a.organization_id, a.balance_micros, t.sum AS transactions_micros FROM credit_accounts a
      CROSS JOIN LATERAL (SELECT COALESCE(sum(amount_micros), 0)::bigint AS sum FROM credit_transactions x
        WHERE x.organization_id = a.organization_id) t
      WHERE ($1::text IS NULL OR a.organization_id = $1::text) AND a.balance_micros <> t.sum`
  },
  {
    name: "usage_equals_captured_costs",
    rule: "the usage transactions of an organization are the costs of its runs that held credit",
    query: `SELECT a.organization_id, -u.sum AS usage_micros, c.sum AS captured_micros FROM credit_accounts a
      CROSS JOIN LATERAL (SELECT COALESCE(sum(amount_micros), 0)::bigint AS sum FROM credit_transactions x
        WHERE x.organization_id = a.organization_id AND x.kind = 'usage') u
      CROSS JOIN LATERAL (SELECT COALESCE(sum(cost_micros), 0)::bigint AS sum FROM runs r
        WHERE r.organization_id = a.organization_id AND r.hold_credit) c
      WHERE ($1::text IS NULL OR a.organization_id = $1::text) AND -u.sum <> c.sum`
  },
  {
    name: "leases_within_balance",
    rule: "the credit leased to server processes never exceeds the balance",
    query: `SELECT a.organization_id, a.balance_micros, l.sum AS leased_micros FROM credit_accounts a
      CROSS JOIN LATERAL (SELECT COALESCE(sum(credit_micros), 0)::bigint AS sum FROM ledger_leases x
        WHERE x.organization_id = a.organization_id) l
      WHERE ($1::text IS NULL OR a.organization_id = $1::text) AND l.sum > GREATEST(0, a.balance_micros)`
  },
  {
    name: "quota_equals_runs",
    rule: "each period's settled spend and tokens are the costs and tokens of its runs",
    query: `SELECT p.organization_id, to_char(p.period, 'YYYY-MM-DD') AS period, p.spend_settled_micros,
        r.spend AS runs_spend_micros, p.tokens_settled, r.tokens AS runs_tokens
      FROM quota_periods p
      CROSS JOIN LATERAL (SELECT COALESCE(sum(cost_micros), 0)::bigint AS spend,
          COALESCE(sum(input_tokens + output_tokens), 0)::bigint AS tokens
        FROM runs x WHERE x.organization_id = p.organization_id AND x.period = p.period) r
      WHERE ($1::text IS NULL OR p.organization_id = $1::text)
        AND (p.spend_settled_micros <> r.spend OR p.tokens_settled <> r.tokens)`
  },
  {
    name: "run_cost_equals_billed_calls",
    rule: "each run's cost is the sum of its billed calls",
    query: `SELECT r.id::text AS run_id, r.organization_id, r.cost_micros, c.sum AS billed_micros FROM runs r
      CROSS JOIN LATERAL (SELECT COALESCE(sum(cost_micros), 0)::bigint AS sum FROM ledger_entries l
        WHERE l.run_id = r.id AND l.billed) c
      WHERE ($1::text IS NULL OR r.organization_id = $1::text) AND r.cost_micros <> c.sum`
  },
  {
    name: "key_counters_equal_runs",
    rule: "each key's settled spend and tokens are the costs and tokens of its runs of its current period",
    query: `SELECT k.key_id, k.organization_id, k.spend_settled_micros, r.spend AS runs_spend_micros, k.tokens_settled,
        r.tokens AS runs_tokens
      FROM key_accounts k
      CROSS JOIN LATERAL (SELECT COALESCE(sum(cost_micros), 0)::bigint AS spend,
          COALESCE(sum(input_tokens + output_tokens), 0)::bigint AS tokens
        FROM runs x WHERE x.key_id = k.key_id AND x.created_at >= k.period_start) r
      WHERE ($1::text IS NULL OR k.organization_id = $1::text)
        AND k.period_start >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - interval '31 days'
        AND (k.spend_settled_micros <> r.spend OR k.tokens_settled <> r.tokens)`
  },
  {
    name: "calls_name_run_key",
    rule: "each call names its run's key",
    query: `SELECT l.run_id::text AS run_id, l.call_index, l.key_id AS call_key_id, r.key_id AS run_key_id
      FROM ledger_entries l JOIN runs r ON r.id = l.run_id
      WHERE ($1::text IS NULL OR l.organization_id = $1::text) AND l.key_id IS DISTINCT FROM r.key_id`
  }
]

const inFlightQuery = `SELECT
    (SELECT count(*) FROM organizations WHERE $1::text IS NULL OR id = $1::text)::int AS organizations,
    (SELECT count(*) FROM runs WHERE held AND ($1::text IS NULL OR organization_id = $1::text))::int AS runs_holding,
    (SELECT count(*) FROM runs WHERE held AND ($1::text IS NULL OR organization_id = $1::text)
      AND deadline_at < now() - make_interval(secs => ${LateHoldSeconds}))::int AS runs_holding_past_deadline,
    (SELECT count(*) FROM ledger_entries WHERE NOT billed AND ($1::text IS NULL OR organization_id = $1::text))::int
      AS unbilled_calls,
    (SELECT count(*) FROM ledger_leases WHERE $1::text IS NULL OR organization_id = $1::text)::int AS leases,
    (SELECT count(*) FROM ledger_leases WHERE ($1::text IS NULL OR organization_id = $1::text)
      AND (credit_held <> 0 OR spend_held <> 0 OR tokens_held <> 0))::int AS leases_holding,
    (SELECT count(*) FROM ledger_holders)::int AS holders,
    (SELECT count(*) FROM ledger_holders WHERE heartbeat_at < now() - make_interval(secs => $2::int))::int
      AS holders_stale,
    current_setting('autovacuum') AS autovacuum,
    now() AS audited_at`

/** The snapshot's figures: what was in flight (`in_flight`), and what the warnings read. */
interface InFlightRow {
  readonly runs_holding: number
  readonly runs_holding_past_deadline: number
  readonly unbilled_calls: number
  readonly leases: number
  readonly leases_holding: number
  readonly holders: number
  readonly holders_stale: number
  readonly organizations: number
  readonly autovacuum: string
  readonly audited_at: Date | string
}

const warningsOf = (row: InFlightRow, leaseTtlSeconds: number): ReadonlyArray<string> =>
  [
    row.runs_holding_past_deadline > 0 &&
    `${row.runs_holding_past_deadline} run(s) still hold more than ${LateHoldSeconds} s past their deadline: a ` +
      "settlement still retrying (is the database refusing it?), or a process that died and no live one has swept",
    row.holders_stale > 0 &&
    `${row.holders_stale} server process(es) have not beaten their heartbeat for more than ${leaseTtlSeconds} s ` +
      "(LEDGER_LEASE_TTL_SECONDS): a live process sweeps their runs and leases; none does while no server runs",
    row.autovacuum === "off" &&
    "autovacuum is off: nothing removes the dead rows the ledger's updates leave (runs, leases, accounts); " +
      "turn it on, or vacuum those tables on a schedule"
  ].filter((warning) => warning !== false)

/**
 * Audits the ledger of one organization, or of all (`organizationId` null), in one read-only snapshot;
 * `leaseTtlSeconds` is how long a server process may go without a heartbeat before it counts as gone. Each check
 * gives how many rows break its rule and the first few; `ok` when none is broken; `warnings` are worth an operator's
 * look though no rule is broken.
 */
export const auditLedger = (organizationId: string | null, leaseTtlSeconds: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`
      const checks: Array<AuditCheck> = []
      for (const { name, query, rule } of rules) {
        const rows = yield* sql.unsafe<Record<string, unknown>>(
          `SELECT v.*, count(*) OVER () AS violations FROM (${query}) v LIMIT ${ExampleRows}`,
          [organizationId]
        )
        const violations = Number(rows[0]?.["violations"] ?? 0)
        checks.push({ name, rule, violations, examples: rows.map(({ violations: _, ...example }) => example) })
      }
      const [row] = yield* sql.unsafe<InFlightRow>(inFlightQuery, [organizationId, leaseTtlSeconds])
      const { audited_at, autovacuum: _, organizations, ...inFlight } = row!
      return {
        ok: checks.every((check) => check.violations === 0),
        audited_at: new Date(audited_at).toISOString(),
        organization_id: organizationId,
        organizations,
        checks,
        in_flight: inFlight,
        warnings: warningsOf(row!, leaseTtlSeconds)
      }
    }))
  })
