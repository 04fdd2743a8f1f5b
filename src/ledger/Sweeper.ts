/**
 * Settles the runs of processes that died, so nothing stays held for ever. A holder whose heartbeat is older than the
 * TTL (Holder.ts) is taken for dead, but only by a process itself steady: each of its runs still holding is settled
 * like any other, its calls recorded while it ran billed (`failed` with `deadline_exceeded` when one was answered,
 * else left `pending`), its leases returned and the holder forgotten once nothing holds against it. A run holding
 * without a holder row (admitted before holders existed, or admitted by a process taken for dead in the moment its
 * row was forgotten) is settled a minute after its deadline: no heartbeat vouches for it, and by then its own process,
 * if it lives, has answered it. Safe in every process at once: settlement locks accounts in one order and bills each
 * call once, and a run its own process settles later keeps the state it settles with.
 */
import { Effect, Layer, Schedule } from "effect"
import { AppConfig } from "../config/AppConfig.js"
import { PgPools } from "../db/PgPool.js"
import { CreditStore } from "./CreditStore.js"
import { LedgerHolder } from "./Holder.js"
import { query, type Statement } from "../db/LedgerSql.js"
import { returnLeases } from "./Leases.js"
import { QuotaLedger } from "./QuotaLedger.js"
import { type SettlementInput, settlementWith } from "./Settlement.js"

/** How long after its deadline a run holding without a holder row is taken for abandoned. */
export const AbandonedAfterSeconds = 60

const deadHolders: Statement = {
  name: "ledger_dead_holders",
  text: `SELECT id FROM ledger_holders WHERE heartbeat_at < now() - make_interval(secs => $1) AND id <> $2
    ORDER BY heartbeat_at LIMIT 10`
}

// The columns are the fields of a run's settlement (`SettlementInput`), and whether one of its calls was answered.
const runColumns = `id::text, organization_id AS "organizationId", origin, idempotency_key AS "idempotencyKey", kind,
  input_digest AS "inputDigest", to_char(period, 'YYYY-MM-DD') AS period, hold_credit AS "holdCredit",
  created_at AS "createdAt", deadline_at AS "deadlineAt", holder, key_id AS "keyId",
  EXISTS (SELECT 1 FROM ledger_entries l WHERE l.run_id = runs.id AND l.status = 'succeeded') AS answered`

const runsOfHolder: Statement = {
  name: "ledger_runs_of_holder",
  text: `SELECT ${runColumns} FROM runs WHERE holder = $1 AND held LIMIT 200`
}

const unvouchedRuns: Statement = {
  name: "ledger_unvouched_runs",
  text: `SELECT ${runColumns} FROM runs
    WHERE held AND deadline_at < now() - make_interval(secs => $1)
      AND (holder IS NULL OR NOT EXISTS (SELECT 1 FROM ledger_holders h WHERE h.id = runs.holder))
    ORDER BY deadline_at LIMIT 200`
}

const forgetHolder: Statement = {
  name: "ledger_forget_holder",
  text: `DELETE FROM ledger_holders h WHERE h.id = $1
    AND NOT EXISTS (SELECT 1 FROM ledger_leases WHERE holder = $1)
    AND NOT EXISTS (SELECT 1 FROM runs WHERE holder = $1 AND held)`
}

type HeldRun = Omit<SettlementInput, "recreate" | "end"> & { readonly answered: boolean }

const abandoned = ({ answered, ...run }: HeldRun): SettlementInput => ({
  ...run,
  recreate: false,
  end: {
    state: answered ? "failed" : "pending",
    output: null,
    outputDigest: null,
    errorCode: answered ? "deadline_exceeded" : null,
    errorMessage: answered ? "the run's process stopped before the run settled; its answered calls are billed" : null,
    calls: []
  }
})

/** Runs by organization (`LEDGER_BATCHES=organization`: no settlement holds two organizations' runs). */
const organizationsOf = (runs: ReadonlyArray<HeldRun>): ReadonlyArray<ReadonlyArray<HeldRun>> => {
  const groups = new Map<string, Array<HeldRun>>()
  for (const run of runs) {
    const group = groups.get(run.organizationId)
    if (group === undefined) groups.set(run.organizationId, [run])
    else group.push(run)
  }
  return [...groups.values()]
}

/** Settles the runs of dead holders (and abandoned runs without a holder row) once; returns how many. */
export const sweepOnce = Effect.gen(function*() {
  const { main } = yield* PgPools
  const holder = yield* LedgerHolder
  const settleBatch = settlementWith(yield* QuotaLedger, yield* CreditStore)
  const byOrganization = (yield* AppConfig).ledgerBatches === "organization"
  let swept = 0
  const settle = (runs: ReadonlyArray<HeldRun>) =>
    Effect.forEach(
      byOrganization ? organizationsOf(runs) : runs.length === 0 ? [] : [runs],
      (batch) => Effect.tap(settleBatch(main, batch.map(abandoned)), () => Effect.sync(() => (swept += batch.length))),
      { discard: true }
    )
  yield* settle(yield* query<HeldRun>(main, unvouchedRuns, [AbandonedAfterSeconds]))
  if (holder.steady()) {
    for (const { id } of yield* query<{ id: string }>(main, deadHolders, [holder.ttlSeconds, holder.id()])) {
      yield* settle(yield* query<HeldRun>(main, runsOfHolder, [id]))
      yield* returnLeases(main, id)
      yield* query(main, forgetHolder, [id])
    }
  }
  if (swept > 0) yield* Effect.logWarning(`settled ${swept} runs whose process stopped`)
  return swept
})

/** The sweeper, three times per lease TTL for the life of the process. */
export const SweeperLive = Layer.effectDiscard(
  Effect.flatMap(LedgerHolder, (holder) =>
    sweepOnce.pipe(
      Effect.catch((error) => Effect.logWarning("sweeper could not run", error.message)),
      Effect.repeat(Schedule.spaced((holder.ttlSeconds * 1000) / 3)),
      Effect.forkScoped
    ))
)
