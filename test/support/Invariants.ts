/**
 * The money invariants, checked against the stored rows after a test with the ledger's own audit
 * (src/ledger/Audit.ts, the operator CLI's `ledger audit`): every balance equals the sum of its transactions, the
 * captured costs equal the costs of the runs that held credit, the leases never escrow more credit than the balance,
 * the quota and key counters equal what runs settled, each run's cost is the sum of its billed calls and each call
 * names its run's key; and, once every run has settled, no hold is left behind (no run holds, no lease holds
 * anything, every call is billed).
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { auditLedger } from "../../src/ledger/Audit.js"

/** Asserts the invariants for every organization in the database. */
export const assertMoneyInvariants = Effect.gen(function*() {
  const audit = yield* auditLedger(null, 30)
  for (const check of audit.checks) {
    assert.deepStrictEqual(
      { name: check.name, violations: check.violations, examples: check.examples },
      { name: check.name, violations: 0, examples: [] },
      check.rule
    )
  }
  assert.isTrue(audit.ok)
  const { leases_holding, runs_holding, unbilled_calls } = audit.in_flight
  assert.deepStrictEqual(
    { runs_holding, leases_holding, unbilled_calls },
    { runs_holding: 0, leases_holding: 0, unbilled_calls: 0 },
    "no run, lease or call still holds or waits"
  )
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
