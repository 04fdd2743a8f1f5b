/**
 * This process as a holder of leases and runs (ledger_holders): registered at start under a fresh id, kept alive by
 * a heartbeat three times per TTL (`LEDGER_LEASE_TTL_SECONDS`, PostgreSQL's clock), and taken for dead by the other
 * processes' sweepers (Sweeper.ts) once its heartbeat is a TTL old. A process that finds its row gone registers again
 * under a new id and drops every slice it mirrored. A process judges others only while `steady` (a full TTL of its
 * own heartbeats without a gap), so an outage all processes shared never makes one take the others for dead.
 */
import { Context, Effect, Layer, Schedule } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { randomBytes } from "node:crypto"
import { AppConfig } from "../config/AppConfig.js"
import { PgPools } from "../db/PgPool.js"
import { query, type Statement } from "../db/LedgerSql.js"

const register: Statement = { name: "ledger_register_holder", text: "INSERT INTO ledger_holders (id) VALUES ($1)" }
const beat: Statement = {
  name: "ledger_heartbeat",
  text: "UPDATE ledger_holders SET heartbeat_at = now() WHERE id = $1 RETURNING id"
}

const newHolderId = () => `h_${randomBytes(16).toString("hex")}`

export interface LedgerHolderService {
  /** The current holder id (it changes only if the process was taken for dead and registered again). */
  readonly id: () => string
  /** How long a holder's heartbeat may be silent before the others take it for dead. */
  readonly ttlSeconds: number
  /** Whether this process has beaten without a gap for a whole TTL, so it may take silent holders for dead. */
  readonly steady: () => boolean
  /** Runs `listener` whenever the process registers again under a new id (its leases are gone). */
  readonly onReregistered: (listener: () => void) => void
}

export class LedgerHolder extends Context.Service<LedgerHolder, LedgerHolderService>()("LedgerHolder") {
  /** Registers at start, beats until the scope closes. */
  static readonly layer = Layer.effect(
    LedgerHolder,
    Effect.gen(function*() {
      const { main } = yield* PgPools
      const ttlSeconds = (yield* AppConfig).ledgerLeaseTtlSeconds
      const HeartbeatMs = (ttlSeconds * 1000) / 3
      let id = newHolderId()
      let steadySince = Date.now()
      let lastBeat = Date.now()
      const listeners: Array<() => void> = []
      yield* query(main, register, [id])
      const heartbeat: Effect.Effect<void, SqlError> = Effect.gen(function*() {
        const rows = yield* query(main, beat, [id])
        const now = Date.now()
        if (now - lastBeat > HeartbeatMs * 2) steadySince = now
        lastBeat = now
        if (rows.length > 0) return
        id = newHolderId()
        steadySince = now
        yield* query(main, register, [id])
        for (const listener of listeners) listener()
      })
      yield* heartbeat.pipe(
        Effect.catch((error) => Effect.logWarning("ledger heartbeat failed", error.message)),
        Effect.repeat(Schedule.spaced(HeartbeatMs)),
        Effect.forkScoped
      )
      return {
        id: () => id,
        ttlSeconds,
        steady: () => Date.now() - lastBeat < HeartbeatMs * 2 && Date.now() - steadySince >= ttlSeconds * 1000,
        onReregistered: (listener) => void listeners.push(listener)
      }
    })
  )
}
