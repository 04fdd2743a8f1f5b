/**
 * Settlement: the run's one synchronous commit, for a batch of runs of any organizations (their accounts locked in
 * organization order first, so batches of several processes never wait on each other in a cycle). Money moves with
 * the ledger: each call is billed exactly once, when a settlement first stores it or finds it stored unbilled (a
 * call recorded while its run was reading, or by a sweeper), so a retried, repeated or late settlement bills nothing
 * twice and misses nothing. Per run, in one statement: its calls stored, its billed cost captured from credit
 * (the credit store's `captureSql`) and committed to its month's quota (the quota ledger's `settleSql`), both parts of
 * the one statement built from those services (`settlementWith`), its holds released once (from its lease, or from
 * the organization's escrow when it was admitted outside a lease), its final state written while it still held or
 * was still `pending`. A run whose `pending` row an asynchronous commit lost (a PostgreSQL crash) is stored again.
 */
import type { SqlError } from "effect/sql/SqlError"
import { Effect } from "effect"
import type pg from "pg"
import type { CreditStoreService } from "./CreditStore.js"
import type { LeaseRow } from "./Escrow.js"
import type { Statement } from "../db/LedgerSql.js"
import { inOneTransaction } from "../db/OneRoundTrip.js"
import { settleOnKeysStatement } from "./KeyAccounts.js"
import type { QuotaLedgerService } from "./QuotaLedger.js"
import type { PendingRun } from "./Admission.js"
import { type LedgerCall, ledgerRows } from "./RunRecord.js"

/** How a run ended, as it is to be stored. */
export interface RunEnd {
  readonly state: "pending" | "completed" | "failed"
  readonly output: unknown
  readonly outputDigest: string | null
  readonly errorCode: string | null
  readonly errorMessage: string | null
  readonly calls: ReadonlyArray<LedgerCall>
}

/** A run to settle: who it is (enough to store it again if its pending row was lost) and how it ended. */
export interface SettlementInput extends Omit<PendingRun, "holdMicros" | "holdTokens" | "holder"> {
  readonly holder: string | null
  readonly holdCredit: boolean
  /** Store the run again if its row is missing (only for runs known to have been admitted). */
  readonly recreate: boolean
  readonly end: RunEnd
}

/** What one batch did: runs settled or stored again, leases after, and accounts after (for auto-recharge). */
export interface BatchResult {
  readonly settled: ReadonlySet<string>
  readonly leases: ReadonlyArray<LeaseRow>
  readonly accounts: ReadonlyArray<{ readonly organization_id: string; readonly balance_micros: number; readonly recharge_due: boolean }>
  readonly settledAt: Date
}

/**
 * The batch's locks, before its statement: its organizations' accounts in organization order, then its keys' rows
 * in key order (before any lease, as admission's keyed batches lock keys before leases), then the leases its runs
 * still hold against, in lease id order. Each step waits for the one before it (its condition reads it first), so the
 * order holds whichever step PostgreSQL starts with. The statement after it starts with a snapshot taken once every
 * lock is held, so it reads and updates those rows as their last holder committed them: PostgreSQL never
 * re-evaluates it for a row updated meanwhile (an EvalPlanQual recheck, which starts every node of the statement's
 * plan again; a lease is updated by this process's admission batches too, without the account's lock). A run's
 * lease is read by its primary key alone (`lease_id` is null once it no longer holds): a condition on `held` would let
 * the planner read every run holding through a partial index instead. It also sets the transaction's
 * `plan_cache_mode` to `force_generic_plan` (as `inTransaction` does when it opens a ledger transaction; a function
 * call, which `SET LOCAL` outside `BEGIN` is not): the settlement statement is bound after it and runs on its
 * generic plan from its first execution on a connection. Left to choose, PostgreSQL plans the statement for its
 * values at each of its first five executions on every connection of the main pool, at several milliseconds each.
 */
const lockAccounts: Statement = {
  name: "ledger_settle_lock",
  text: `WITH accounts AS MATERIALIZED (
      SELECT organization_id FROM credit_accounts WHERE organization_id = ANY($1::text[])
      ORDER BY organization_id FOR UPDATE
    ),
    keys AS MATERIALIZED (
      SELECT key_id FROM key_accounts WHERE key_id = ANY($2::text[]) AND (SELECT count(*) FROM accounts) >= 0
      ORDER BY key_id FOR NO KEY UPDATE
    ),
    leases AS MATERIALIZED (
      SELECT id FROM ledger_leases
      WHERE id = ANY (ARRAY(SELECT r.lease_id FROM runs r WHERE r.id = ANY($3::uuid[])))
        AND (SELECT count(*) FROM keys) >= 0
      ORDER BY id FOR NO KEY UPDATE
    )
    SELECT (SELECT count(*) FROM accounts) AS accounts, (SELECT count(*) FROM keys) AS keys,
      (SELECT count(*) FROM leases) AS leases, set_config('plan_cache_mode', 'force_generic_plan', true) AS plans`
}

const leaseColumns = `l.id::text, l.organization_id, to_char(l.period, 'YYYY-MM-DD') AS period, l.billing,
  l.spend_limited, l.tokens_limited, l.revoked, l.credit_micros, l.spend_micros, l.tokens, l.version`

// A run still holding, or `pending` after a sweeper released it, takes its final state from the settlement; a run
// already completed or failed keeps its own (an answer may already depend on it) and only gains late calls' cost.
const final = (column: string, value: string) =>
  `${column} = CASE WHEN m.held OR r.state = 'pending' THEN ${value} ELSE r.${column} END`

// The batch's runs and their calls are found by index (`= ANY (ARRAY(...))`), never by joining a whole table: PostgreSQL
// takes `json_to_recordset` for 100 rows, and below some 20,000 runs its generic plan for a join with that many
// hashed sequential scans of `runs` instead, several times slower than the index. That holds for the final UPDATE
// of the runs too: joined only to the batch, its plan on a young table is a sequential scan of `runs` that takes
// most of the statement's time for a batch of one run (docs/ledger.md). A run to store again is one `locked` did not
// find (its row, found by id, is read once): should its row exist under another organization, the insert's conflict
// skips it.
// The settlement statement around its quota and credit parts (`settleStatementOf`).
const settleHead = `WITH input AS (
      SELECT * FROM json_to_recordset($1::json) AS i(id uuid, org text, state text, output json, output_digest text,
        error_code text, error_message text, recreate boolean, origin text, key text, kind text, digest text,
        period date, hold_credit boolean, created_at timestamptz, deadline_at timestamptz, holder text, key_id text)
    ),
    calls AS (
      SELECT * FROM json_to_recordset($2::json) AS c(run_id uuid, call_index int, retry_ordinal int, provider text,
        model_id text, provider_request_id text, status text, input_tokens bigint, output_tokens bigint,
        cost_micros bigint, created_at timestamptz)
    ),
    locked AS (
      SELECT r.id, r.organization_id, r.period, r.held, r.hold_micros, r.hold_tokens, r.hold_credit, r.lease_id,
        r.key_id, r.created_at
      FROM runs r JOIN input i ON r.id = i.id AND r.organization_id = i.org
      WHERE r.id = ANY (ARRAY(SELECT id FROM input))
      FOR NO KEY UPDATE OF r
    ),
    recreated AS (
      INSERT INTO runs (id, organization_id, origin, idempotency_key, kind, state, input_digest, output, output_digest,
        error_code, error_message, input_tokens, output_tokens, cost_micros, period, hold_micros, hold_tokens,
        hold_credit, held, deadline_at, created_at, settled_at, holder, key_id)
      SELECT i.id, i.org, i.origin, i.key, i.kind, i.state, i.digest, i.output, i.output_digest, i.error_code,
        i.error_message, COALESCE(t.input_tokens, 0), COALESCE(t.output_tokens, 0), COALESCE(t.cost, 0), i.period,
        0, 0, i.hold_credit, false, i.deadline_at, i.created_at,
        CASE WHEN i.state = 'pending' THEN NULL ELSE $5::timestamptz END, i.holder, i.key_id
      FROM input i
      LEFT JOIN (SELECT run_id, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
          sum(cost_micros) AS cost FROM calls GROUP BY run_id) t ON t.run_id = i.id
      WHERE i.recreate AND i.id NOT IN (SELECT id FROM locked)
      ON CONFLICT DO NOTHING
      RETURNING id, organization_id, period, hold_credit, key_id, created_at
    ),
    targets AS (
      SELECT id, organization_id, period, held, hold_micros, hold_tokens, hold_credit, lease_id, false AS recreated,
        key_id, created_at
      FROM locked
      UNION ALL
      SELECT id, organization_id, period, false, 0, 0, hold_credit, NULL, true, key_id, created_at FROM recreated
    ),
    new_calls AS (
      INSERT INTO ledger_entries (organization_id, run_id, call_index, retry_ordinal, provider, model_id,
        provider_request_id, status, input_tokens, output_tokens, cost_micros, created_at, billed, key_id)
      SELECT t.organization_id, c.run_id, c.call_index, c.retry_ordinal, c.provider, c.model_id,
        c.provider_request_id, c.status, c.input_tokens, c.output_tokens, c.cost_micros, c.created_at, true, t.key_id
      FROM calls c JOIN targets t ON t.id = c.run_id
      ORDER BY c.run_id, c.call_index
      ON CONFLICT (run_id, call_index) DO NOTHING
      RETURNING run_id, cost_micros, input_tokens, output_tokens
    ),
    early AS (
      UPDATE ledger_entries l SET billed = true FROM locked t
      WHERE l.run_id = t.id AND l.run_id = ANY (ARRAY(SELECT id FROM input)) AND NOT l.billed
      RETURNING l.run_id, l.cost_micros, l.input_tokens, l.output_tokens
    ),
    charged AS (
      SELECT run_id, sum(cost_micros) AS cost, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens
      FROM (SELECT * FROM new_calls UNION ALL SELECT * FROM early) x GROUP BY run_id
    ),
    moves AS (
      SELECT t.id, t.organization_id, t.period, t.lease_id, t.hold_credit, t.held, t.recreated, t.key_id, t.created_at,
        t.hold_micros,
        t.hold_tokens, COALESCE(c.cost, 0) AS cost, COALESCE(c.input_tokens, 0) AS input_tokens,
        COALESCE(c.output_tokens, 0) AS output_tokens, COALESCE(c.input_tokens + c.output_tokens, 0) AS tokens
      FROM targets t LEFT JOIN charged c ON c.run_id = t.id
    ),
    settled AS (
      UPDATE runs r SET held = false, lease_id = NULL,
        ${final("state", "i.state")}, ${final("output", "i.output")}, ${final("output_digest", "i.output_digest")},
        ${final("error_code", "i.error_code")}, ${final("error_message", "i.error_message")},
        ${final("settled_at", "CASE WHEN i.state = 'pending' THEN NULL ELSE $5::timestamptz END")},
        input_tokens = r.input_tokens + m.input_tokens, output_tokens = r.output_tokens + m.output_tokens,
        cost_micros = r.cost_micros + m.cost
      FROM moves m JOIN input i ON i.id = m.id
      WHERE r.id = m.id AND r.id = ANY (ARRAY(SELECT id FROM input)) AND NOT m.recreated
      RETURNING r.id
    ),
    released AS (
      UPDATE ledger_leases l SET credit_micros = l.credit_micros - d.credit_cost,
        credit_held = l.credit_held - d.credit_hold,
        spend_micros = l.spend_micros - CASE WHEN l.spend_limited THEN d.cost ELSE 0 END,
        spend_held = l.spend_held - CASE WHEN l.spend_limited THEN d.hold_micros ELSE 0 END,
        tokens = l.tokens - CASE WHEN l.tokens_limited THEN d.token_use ELSE 0 END,
        tokens_held = l.tokens_held - CASE WHEN l.tokens_limited THEN d.hold_tokens ELSE 0 END,
        version = l.version + 1
      FROM (SELECT lease_id, sum(CASE WHEN hold_credit THEN cost ELSE 0 END) AS credit_cost,
          sum(CASE WHEN hold_credit THEN hold_micros ELSE 0 END) AS credit_hold, sum(cost) AS cost,
          sum(hold_micros) AS hold_micros, sum(LEAST(tokens, hold_tokens)) AS token_use, sum(hold_tokens) AS hold_tokens
        FROM moves WHERE held AND lease_id IS NOT NULL GROUP BY lease_id) d
      WHERE l.id = d.lease_id AND l.id = ANY (ARRAY(SELECT lease_id FROM moves WHERE held AND lease_id IS NOT NULL))
      RETURNING ${leaseColumns}
    ),`

const settleTail = `    SELECT (SELECT json_agg(id) FROM settled) AS settled, (SELECT json_agg(id) FROM recreated) AS recreated,
      (SELECT json_agg(released) FROM released) AS leases,
      (SELECT json_agg(json_build_object('organization_id', c.organization_id, 'balance_micros', c.balance_micros,
          'recharge_due', COALESCE(o.billing_enabled AND s.auto_recharge_enabled AND s.recharge_armed
            AND s.payment_method_id IS NOT NULL AND s.processor_customer_id IS NOT NULL
            AND c.balance_micros < s.auto_recharge_threshold_micros
            AND (s.recharge_retry_after IS NULL OR s.recharge_retry_after < $5::timestamptz), false)))
        FROM captured c
        JOIN organizations o ON o.id = c.organization_id AND o.id = ANY (ARRAY(SELECT organization_id FROM captured))
        LEFT JOIN billing_settings s ON s.organization_id = c.organization_id
          AND s.organization_id = ANY (ARRAY(SELECT organization_id FROM captured))) AS accounts`

/** The settlement statement, with the quota ledger's and the credit store's parts. */
const settleStatementOf = (quotaPart: string, creditPart: string): Statement => ({
  name: "ledger_settle",
  text: `${settleHead}
    ${quotaPart},
    ${settleOnKeysStatement},
    ${creditPart}
${settleTail}`
})

const inputRow = (input: SettlementInput) => ({
  id: input.id,
  org: input.organizationId,
  state: input.end.state,
  output: input.end.output,
  output_digest: input.end.outputDigest,
  error_code: input.end.errorCode,
  error_message: input.end.errorMessage,
  recreate: input.recreate,
  origin: input.origin,
  key: input.idempotencyKey,
  kind: input.kind,
  digest: input.inputDigest,
  period: input.period,
  hold_credit: input.holdCredit,
  created_at: input.createdAt.toISOString(),
  deadline_at: input.deadlineAt.toISOString(),
  holder: input.holder,
  key_id: input.keyId
})

/** The settlement statement's one row. */
interface SettledRow {
  readonly settled: ReadonlyArray<string> | null
  readonly recreated: ReadonlyArray<string> | null
  readonly leases: ReadonlyArray<LeaseRow> | null
  readonly accounts: BatchResult["accounts"] | null
}

/** Settles a batch of runs in one transaction on `pool`. */
export type SettleBatch = (pool: pg.Pool, batch: ReadonlyArray<SettlementInput>) => Effect.Effect<BatchResult, SqlError>

/**
 * Settlement over the quota ledger and the credit store: its statement carries their parts (built once here), and a
 * batch settles in one transaction on `pool` (the main pool: its commit is synchronous), the accounts' locks and the
 * settlement statement in one round trip (OneRoundTrip.ts).
 */
export const settlementWith = (
  quota: Pick<QuotaLedgerService, "settleSql">,
  credit: Pick<CreditStoreService, "captureSql" | "usageTransaction">
): SettleBatch => {
  const settleStatement = settleStatementOf(quota.settleSql, credit.captureSql)
  return (pool, batch) =>
    Effect.suspend(() => {
      const now = new Date()
      const usage = credit.usageTransaction(now)
      const organizations = [...new Set(batch.map((input) => input.organizationId))].sort()
      const keys = [...new Set(batch.flatMap((input) => (input.keyId === null ? [] : [input.keyId])))]
      const runs = JSON.stringify(batch.map(inputRow))
      const calls = JSON.stringify(batch.flatMap((input) => ledgerRows(input.end.calls)))
      return Effect.map(
        inOneTransaction(pool, [
          { statement: lockAccounts, values: [organizations, keys, batch.map((input) => input.id)] },
          { statement: settleStatement, values: [runs, calls, usage.id, usage.description, now.toISOString()] }
        ]),
        ([, rows]) => {
          const row = rows?.[0] as SettledRow | undefined
          return {
            settled: new Set([...(row?.settled ?? []), ...(row?.recreated ?? [])]),
            leases: row?.leases ?? [],
            accounts: row?.accounts ?? [],
            settledAt: now
          }
        }
      )
    })
}
