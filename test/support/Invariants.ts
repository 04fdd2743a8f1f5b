/**
 * The money invariants, checked against the stored rows after a test: every balance equals the sum of its
 * transactions (grants + purchases - captured costs), the captured costs equal the costs of the runs that held
 * credit, the quota counters equal what runs settled, once every run has settled no hold is left behind (no run
 * holds, no lease holds anything, every call is billed), and the leases never escrow more credit than the balance.
 */
import { SqlClient } from "@effect/sql"
import { assert } from "@effect/vitest"
import { Effect } from "effect"

/** Asserts the invariants for every organization in the database. */
export const assertMoneyInvariants = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const accounts = yield* sql<{
    organization_id: string
    balance_micros: number
    reserved_micros: number
    transactions: number
    usage: number
    captured: number
  }>`SELECT a.organization_id, a.balance_micros,
      COALESCE((SELECT sum(credit_micros) FROM ledger_leases x WHERE x.organization_id = a.organization_id), 0)::bigint AS reserved_micros,
      COALESCE((SELECT sum(amount_micros) FROM credit_transactions t WHERE t.organization_id = a.organization_id), 0)::bigint AS transactions,
      COALESCE((SELECT sum(amount_micros) FROM credit_transactions t WHERE t.organization_id = a.organization_id AND t.kind = 'usage'), 0)::bigint AS usage,
      COALESCE((SELECT sum(cost_micros) FROM runs r WHERE r.organization_id = a.organization_id AND r.hold_credit), 0)::bigint AS captured
    FROM credit_accounts a`
  for (const account of accounts) {
    assert.strictEqual(account.balance_micros, account.transactions, `balance = sum of transactions (${account.organization_id})`)
    assert.strictEqual(-account.usage, account.captured, `usage transactions = captured run costs (${account.organization_id})`)
    assert.isAtMost(account.reserved_micros, Math.max(0, account.balance_micros), `leases within the balance (${account.organization_id})`)
  }
  const periods = yield* sql<{ organization_id: string; spend_settled_micros: number; tokens_settled: number; spend: number; tokens: number }>`
    SELECT p.organization_id, p.spend_settled_micros, p.tokens_settled,
      COALESCE((SELECT sum(cost_micros) FROM runs r WHERE r.organization_id = p.organization_id AND r.period = p.period), 0)::bigint AS spend,
      COALESCE((SELECT sum(input_tokens + output_tokens) FROM runs r WHERE r.organization_id = p.organization_id AND r.period = p.period), 0)::bigint AS tokens
    FROM quota_periods p`
  for (const period of periods) {
    assert.strictEqual(period.spend_settled_micros, period.spend, `quota spend = run costs (${period.organization_id})`)
    assert.strictEqual(period.tokens_settled, period.tokens, `quota tokens = run tokens (${period.organization_id})`)
  }
  const [held] = yield* sql<{ runs: number; leases: number; unbilled: number }>`SELECT
    (SELECT count(*)::int FROM runs WHERE held) AS runs,
    (SELECT count(*)::int FROM ledger_leases WHERE credit_held <> 0 OR spend_held <> 0 OR tokens_held <> 0) AS leases,
    (SELECT count(*)::int FROM ledger_entries WHERE NOT billed) AS unbilled`
  assert.deepStrictEqual(held, { runs: 0, leases: 0, unbilled: 0 }, "no run, lease or call still holds or waits")
  const [ledger] = yield* sql<{ mismatched: number }>`SELECT count(*)::int AS mismatched FROM runs r
    WHERE r.cost_micros <> COALESCE((SELECT sum(cost_micros) FROM ledger_entries l WHERE l.run_id = r.id), 0)`
  assert.strictEqual(ledger!.mismatched, 0, "every run's cost is the sum of its ledger entries")
  // A key's settled counters are the billed cost and tokens of its runs of its current period (KeyAccounts.ts),
  // and each ledger entry names its run's key.
  const keys = yield* sql<{ key_id: string; spend_settled_micros: number; tokens_settled: number; spend: number; tokens: number }>`
    SELECT k.key_id, k.spend_settled_micros, k.tokens_settled,
      COALESCE((SELECT sum(cost_micros) FROM runs r WHERE r.key_id = k.key_id AND r.created_at >= k.period_start), 0)::bigint AS spend,
      COALESCE((SELECT sum(input_tokens + output_tokens) FROM runs r WHERE r.key_id = k.key_id AND r.created_at >= k.period_start), 0)::bigint AS tokens
    FROM key_accounts k WHERE k.period_start >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - interval '31 days'`
  for (const key of keys) {
    assert.strictEqual(key.spend_settled_micros, key.spend, `key spend = its runs' costs (${key.key_id})`)
    assert.strictEqual(key.tokens_settled, key.tokens, `key tokens = its runs' tokens (${key.key_id})`)
  }
  const [entries] = yield* sql<{ mismatched: number }>`SELECT count(*)::int AS mismatched FROM ledger_entries l
    JOIN runs r ON r.id = l.run_id WHERE l.key_id IS DISTINCT FROM r.key_id`
  assert.strictEqual(entries!.mismatched, 0, "every ledger entry names its run's key")
})

/** Gives an organization credit through the credit store (as `credit grant` does). */
export const grantCredit = (organizationId: string, amountMicros: number) =>
  Effect.flatMap(
    Effect.promise(() => import("../../src/ledger/CreditStore.js")),
    ({ CreditStore }) =>
      Effect.flatMap(CreditStore, (store) =>
        store.credit({
          organizationId,
          id: `txn_${crypto.randomUUID().replace(/-/g, "")}`,
          kind: "grant",
          amountMicros,
          description: "test grant"
        }))
  )
