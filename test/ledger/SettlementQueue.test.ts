/**
 * The settlement queue's handling of a batch PostgreSQL refuses for its data, with a stand-in for the settlement
 * transaction (the real one is exercised over HTTP on PostgreSQL by MultiProcess.solo.test.ts): the batch is split in
 * halves until the refused run is alone, so its neighbours commit after a few transactions, in parts, never one by
 * one; the refused run alone is settled again, degraded to `failed` without its output, and a run the database
 * cannot take at all is finished unsettled instead of retried forever. A batch that fails because the database is away
 * is retried until it commits. The queue's metrics count each of these, and its gauge the runs not settled yet.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Metric } from "effect"
import type pg from "pg"
import { sqlErrorOf } from "../../src/db/LedgerSql.js"
import type { BatchResult, SettleBatch, SettlementInput } from "../../src/ledger/Settlement.js"
import { makeSettlementQueue } from "../../src/ledger/SettlementQueue.js"

const run = (id: string): SettlementInput => ({
  id,
  organizationId: "org_test",
  origin: "runs",
  idempotencyKey: `key-${id}`,
  kind: "decision",
  inputDigest: "digest",
  period: "2026-11-01",
  holdCredit: true,
  createdAt: new Date(0),
  deadlineAt: new Date(60_000),
  holder: null,
  keyId: null,
  recreate: false,
  end: {
    state: "completed",
    output: { id },
    outputDigest: "out",
    errorCode: null,
    errorMessage: null,
    calls: [{
      runId: id,
      callIndex: 0,
      retryOrdinal: 0,
      provider: "openai",
      modelId: "model",
      providerRequestId: `req-${id}`,
      status: "succeeded",
      inputTokens: 10,
      outputTokens: 1,
      costMicros: 25,
      createdAt: new Date(0)
    }]
  }
})

/** A data error, as PostgreSQL reports a value it refuses (class 22). */
const refused = () => sqlErrorOf(Object.assign(new Error("poisoned output"), { code: "22023" }), "refused")

/**
 * A settlement that holds its first transaction until `release` (so the runs submitted meanwhile gather into one
 * batch), refuses every batch holding a completed `poison` run, and records the ids of each transaction.
 */
const standIn = (options: { readonly poisonAlways?: boolean } = {}) =>
  Effect.gen(function*() {
    const transactions: Array<ReadonlyArray<string>> = []
    const release = yield* Deferred.make<void>()
    const settle: SettleBatch = (_pool, batch) =>
      Effect.gen(function*() {
        transactions.push(batch.map((input) => input.id))
        if (transactions.length === 1) yield* Deferred.await(release)
        const poisoned = batch.some((input) =>
          input.id === "poison" && (options.poisonAlways === true || input.end.state === "completed"))
        if (poisoned) return yield* Effect.fail(refused())
        const result: BatchResult = {
          settled: new Set(batch.map((input) => input.id)),
          leases: [],
          accounts: [],
          settledAt: new Date()
        }
        return result
      })
    return { transactions, release, settle }
  })

/**
 * A counter's value in this process (metrics are process-wide: other tests of the file may have counted too, so the
 * tests compare before and after).
 */
const counted = (name: string, result?: string) =>
  Effect.map(Metric.snapshot, (snapshots) => {
    for (const snapshot of snapshots) {
      if (snapshot.id === name && snapshot.attributes?.["result"] === result) {
        return Number((snapshot.state as unknown as { readonly count: number | bigint }).count)
      }
    }
    return 0
  })

const refusals = Effect.all({
  degraded: counted("arbiter_ledger_settlements_refused_total", "degraded"),
  unsettled: counted("arbiter_ledger_settlements_refused_total", "unsettled")
})

const ids = (count: number) => Array.from({ length: count }, (_, index) => `run-${index}`)

describe("SettlementQueue", () => {
  it.effect("a refused batch is split in halves until its refused run is alone; the others commit in parts", () =>
    Effect.gen(function*() {
      const { release, settle, transactions } = yield* standIn()
      const services = yield* Effect.context<never>()
      const queue = makeSettlementQueue({} as pg.Pool, { maxBatch: 128, maxInFlight: 1 }, services, settle)
      const before = yield* refusals
      const first = queue.submit(run("first"))
      const batch = [...ids(10).slice(0, 5), "poison", ...ids(10).slice(5)]
      const tickets = batch.map((id) => queue.submit(run(id)))
      assert.strictEqual(queue.waiting(), 12, "every run submitted waits while the first transaction is held")
      yield* Deferred.succeed(release, undefined)
      assert.isTrue((yield* first.committed).stored)
      const settled = yield* Effect.forEach(tickets, (ticket) => ticket.committed)
      // The 11 runs gathered into one batch, refused; its halves are 6 (with the poison) and 5; the 6 split into 3
      // and 3 (with the poison), those into 2 and the poison alone, refused and settled again degraded; then the 5.
      assert.deepStrictEqual(transactions, [
        ["first"],
        batch,
        batch.slice(0, 6),
        batch.slice(0, 3),
        batch.slice(3, 6),
        batch.slice(3, 5),
        ["poison"],
        ["poison"],
        batch.slice(6)
      ])
      for (const [index, outcome] of settled.entries()) {
        const poison = batch[index] === "poison"
        assert.isTrue(outcome.stored)
        assert.strictEqual(outcome.refused, poison)
        assert.strictEqual(outcome.end.state, poison ? "failed" : "completed")
        assert.deepStrictEqual(outcome.end.output, poison ? null : { id: batch[index] })
        assert.deepStrictEqual(outcome.end.calls.map((call) => [call.costMicros, call.providerRequestId]), [
          [25, poison ? null : `req-${batch[index]}`]
        ], "the refused run's call is still settled, without its upstream request id")
      }
      assert.isAtMost(transactions.length - 2, 2 * Math.ceil(Math.log2(batch.length)), "a few transactions, not one per run")
      assert.strictEqual(queue.waiting(), 0)
      const after = yield* refusals
      assert.deepStrictEqual(
        { degraded: after.degraded - before.degraded, unsettled: after.unsettled - before.unsettled },
        { degraded: 1, unsettled: 0 }
      )
    }))

  it.effect("a run refused even degraded is finished unsettled, and the queue goes on", () =>
    Effect.gen(function*() {
      const { release, settle, transactions } = yield* standIn({ poisonAlways: true })
      const services = yield* Effect.context<never>()
      const queue = makeSettlementQueue({} as pg.Pool, { maxBatch: 128, maxInFlight: 1 }, services, settle)
      const before = yield* refusals
      const first = queue.submit(run("first"))
      const poison = queue.submit(run("poison"))
      const other = queue.submit(run("other"))
      yield* Deferred.succeed(release, undefined)
      yield* first.committed
      const refusedOutcome = yield* poison.committed
      assert.isFalse(refusedOutcome.stored)
      assert.isTrue(refusedOutcome.refused)
      assert.isTrue((yield* other.committed).stored)
      assert.deepStrictEqual(transactions, [["first"], ["poison", "other"], ["poison"], ["poison"], ["other"]])
      const after = yield* refusals
      assert.deepStrictEqual(
        { degraded: after.degraded - before.degraded, unsettled: after.unsettled - before.unsettled },
        { degraded: 1, unsettled: 1 }
      )
      assert.strictEqual(queue.waiting(), 0)
    }))

  it.effect("a batch the database did not answer is retried until it commits, and counted", () =>
    Effect.gen(function*() {
      let attempts = 0
      const settle: SettleBatch = (_pool, batch) =>
        Effect.suspend(() => {
          attempts++
          if (attempts <= 2) {
            return Effect.fail(sqlErrorOf(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }), "away"))
          }
          return Effect.succeed<BatchResult>({
            settled: new Set(batch.map((input) => input.id)),
            leases: [],
            accounts: [],
            settledAt: new Date()
          })
        })
      const services = yield* Effect.context<never>()
      const queue = makeSettlementQueue({} as pg.Pool, { maxBatch: 128, maxInFlight: 1 }, services, settle)
      const before = yield* counted("arbiter_ledger_settlement_retries_total")
      const ticket = queue.submit(run("away"))
      assert.strictEqual(queue.waiting(), 1)
      const outcome = yield* ticket.committed
      assert.isTrue(outcome.stored)
      assert.isFalse(outcome.refused)
      assert.strictEqual(attempts, 3)
      assert.strictEqual((yield* counted("arbiter_ledger_settlement_retries_total")) - before, 2)
      assert.strictEqual(queue.waiting(), 0)
    }))
  it.effect("groupOf: each organization's runs settle in batches of their own, one in flight per organization", () =>
    Effect.gen(function*() {
      const { release, settle, transactions } = yield* standIn()
      const services = yield* Effect.context<never>()
      const queue = makeSettlementQueue({} as pg.Pool, {
        maxBatch: 128,
        maxInFlight: 1,
        groupOf: (input) => input.organizationId
      }, services, settle)
      const of = (id: string, organizationId: string) => ({ ...run(id), organizationId })
      const first = queue.submit(of("a-0", "org_a"))
      const rest = ["a-1", "b-1", "a-2", "b-2"].map((id) => queue.submit(of(id, `org_${id[0]}`)))
      // org_b has no batch in flight: its first run does not wait for org_a's held transaction.
      yield* Effect.repeat(Effect.yieldNow, { times: 10 })
      assert.deepStrictEqual(transactions.slice(0, 2), [["a-0"], ["b-1"]])
      yield* Deferred.succeed(release, undefined)
      assert.isTrue((yield* first.committed).stored)
      for (const ticket of rest) assert.isTrue((yield* ticket.committed).stored)
      assert.deepStrictEqual(transactions.map((ids) => [...ids]).sort(), [["a-0"], ["a-1", "a-2"], ["b-1"], ["b-2"]])
      assert.strictEqual(queue.waiting(), 0)
    }))
})
