/**
 * Leases (ledger_leases): a holder's slice of an organization's free credit and free quota, granted in one durable
 * transaction under the organization's lock, so the slices of every process and the holds of runs admitted outside
 * them never exceed what is free (Position.ts). A grant is the slice's shortfall from its target, capped at half of
 * what is free (the rest stays for other processes and for exact admissions); near the limit grants shrink below a
 * run's ceiling and admission goes exact. Unused parts come back when a lease is returned (idle, shutdown), reclaimed
 * (an exact admission that finds too little free takes back every holder's unused parts) or revoked (billing or
 * limits changed: the lease admits nothing more); what admitted runs hold stays until they settle.
 */
import type { SqlError } from "effect/sql/SqlError"
import { Effect } from "effect"
import type pg from "pg"
import { uuidFromHex, uuidv7Hex } from "../ids/Ids.js"
import type { LeaseRow, Needs } from "./Escrow.js"
import { query, type Statement, transaction } from "../db/LedgerSql.js"
import { creditFree, lockAccount, lockPositionAnd, spendFree, tokensFree } from "./Position.js"

const leaseColumns = `id::text, organization_id, to_char(period, 'YYYY-MM-DD') AS period, billing, spend_limited,
  tokens_limited, revoked, credit_micros, spend_micros, tokens, version`

/**
 * The leases matching `condition`, locked in id order. Every statement that changes several leases locks them in this
 * one order first (admission's and settlement's batches do the same), so two of them never wait on each other in a
 * cycle: PostgreSQL would break such a deadlock only after `deadlock_timeout` (a second), failing one of them.
 */
const inLeaseOrder = (condition: string, lock: "NO KEY UPDATE" | "UPDATE" = "NO KEY UPDATE") =>
  `SELECT id FROM ledger_leases WHERE ${condition} ORDER BY id FOR ${lock}`

/** A lease's unused parts taken back (it keeps what admitted runs hold), as a new version. */
const unusedBack = "credit_micros = credit_held, spend_micros = spend_held, tokens = tokens_held, version = version + 1"

/** Revokes an organization's leases (its billing or limits changed): unused parts come back, nothing more is admitted. */
export const revokeLeases: Statement = {
  name: "ledger_revoke_leases",
  text: `UPDATE ledger_leases SET revoked = true, ${unusedBack}
    WHERE id IN (${inLeaseOrder("organization_id = $1 AND NOT revoked")})`
}

/** Takes back the unused parts of every lease of an organization (by any holder); returns the leases changed. */
const reclaimStatement: Statement = {
  name: "ledger_reclaim_leases",
  text: `UPDATE ledger_leases SET ${unusedBack}
    WHERE id IN (${inLeaseOrder(
    "organization_id = $1 AND (credit_micros > credit_held OR spend_micros > spend_held OR tokens > tokens_held)"
  )})
    RETURNING ${leaseColumns}`
}

const currentLease: Statement = {
  name: "ledger_current_lease",
  text: `SELECT ${leaseColumns}, credit_held, spend_held, tokens_held FROM ledger_leases
    WHERE holder = $1 AND organization_id = $2 AND period = $3::date AND NOT revoked FOR UPDATE`
}

const insertLease: Statement = {
  name: "ledger_insert_lease",
  text: `INSERT INTO ledger_leases (id, holder, organization_id, period, billing, spend_limited, tokens_limited,
      credit_micros, spend_micros, tokens)
    VALUES ($1::uuid, $2, $3, $4::date, $5, $6, $7, $8, $9, $10)
    RETURNING ${leaseColumns}`
}

const growLease: Statement = {
  name: "ledger_grow_lease",
  text: `UPDATE ledger_leases SET credit_micros = credit_micros + $2, spend_micros = spend_micros + $3,
      tokens = tokens + $4, version = version + 1
    WHERE id = $1::uuid RETURNING ${leaseColumns}`
}

const revokeLease: Statement = {
  name: "ledger_revoke_lease",
  text: `UPDATE ledger_leases SET revoked = true, ${unusedBack} WHERE id = $1::uuid RETURNING ${leaseColumns}`
}

// A lease nothing holds against goes at once; one runs still hold against keeps only what they hold, admitting
// nothing more, until they settle (then it is deleted with the holder's next return, or by a sweeper).
const deleteUnheld: Statement = {
  name: "ledger_delete_unheld_leases",
  text: `DELETE FROM ledger_leases
    WHERE id IN (${inLeaseOrder(
    "holder = $1 AND organization_id = $2 AND credit_held = 0 AND spend_held = 0 AND tokens_held = 0",
    "UPDATE"
  )})`
}

const returnHeld: Statement = {
  name: "ledger_return_held_leases",
  text: `UPDATE ledger_leases SET revoked = true, ${unusedBack}
    WHERE id IN (${inLeaseOrder("holder = $1 AND organization_id = $2")})`
}

const leasedOrganizations: Statement = {
  name: "ledger_leased_organizations",
  text: "SELECT DISTINCT organization_id FROM ledger_leases WHERE holder = $1 ORDER BY organization_id"
}

/** A dimension's grant: its shortfall from `target` (unused parts count), at most half of what is free. */
const grantOf = (target: number, amount: number, held: number, free: number) =>
  Math.min(Math.max(0, target - (amount - held)), Math.max(0, Math.floor(free / 2)))

/**
 * Grants the holder's lease of the organization for `period` up to `target` free in each dimension it limits, in one
 * transaction on `pool` (the main pool: the grant is durable before anything is admitted against it). A lease whose
 * policy (billing, limits) no longer matches is revoked and replaced. Undefined when the organization does not exist.
 */
export const grantLease = (
  pool: pg.Pool,
  holder: string,
  organizationId: string,
  period: string,
  target: Needs
): Effect.Effect<LeaseRow | undefined, SqlError> =>
  transaction(pool, (client) =>
    Effect.gen(function*() {
      const read = yield* lockPositionAnd(client, organizationId, period, [
        { statement: currentLease, values: [holder, organizationId, period] }
      ])
      const position = read.position
      if (position === undefined) return undefined
      const spendLimited = position.spendLimit !== null
      const tokensLimited = position.tokenLimit !== null
      let lease = read.after[0]![0] as (LeaseRow & { credit_held: number; spend_held: number; tokens_held: number }) | undefined
      if (
        lease !== undefined &&
        (lease.billing !== position.billing || lease.spend_limited !== spendLimited || lease.tokens_limited !== tokensLimited)
      ) {
        yield* query(client, revokeLease, [lease.id])
        lease = undefined
      }
      const grant = {
        credit: position.billing
          ? grantOf(target.micros, lease?.credit_micros ?? 0, lease?.credit_held ?? 0, creditFree(position))
          : 0,
        spend: spendLimited ? grantOf(target.micros, lease?.spend_micros ?? 0, lease?.spend_held ?? 0, spendFree(position)) : 0,
        tokens: tokensLimited ? grantOf(target.tokens, lease?.tokens ?? 0, lease?.tokens_held ?? 0, tokensFree(position)) : 0
      }
      if (lease !== undefined) {
        const [grown] = yield* query<LeaseRow>(client, growLease, [lease.id, grant.credit, grant.spend, grant.tokens])
        return grown
      }
      const [created] = yield* query<LeaseRow>(client, insertLease, [
        uuidFromHex(uuidv7Hex()),
        holder,
        organizationId,
        period,
        position.billing,
        spendLimited,
        tokensLimited,
        grant.credit,
        grant.spend,
        grant.tokens
      ])
      return created
    }))

/** Takes back the unused parts of every lease of the organization (inside the caller's transaction, under its lock). */
export const reclaimLeases = (client: pg.PoolClient, organizationId: string) =>
  query<LeaseRow>(client, reclaimStatement, [organizationId])

/**
 * Returns the holder's leases of some organizations (all of them when none are named): their unused parts come
 * back, they admit nothing more, and those no run holds against are deleted. One transaction per organization, each
 * under its lock.
 */
export const returnLeases = (
  pool: pg.Pool,
  holder: string,
  organizationIds?: ReadonlyArray<string>
): Effect.Effect<void, SqlError> =>
  Effect.gen(function*() {
    const organizations = organizationIds ??
      (yield* query<{ organization_id: string }>(pool, leasedOrganizations, [holder])).map((row) => row.organization_id)
    yield* Effect.forEach(organizations, (organizationId) =>
      transaction(pool, (client) =>
        Effect.gen(function*() {
          yield* query(client, lockAccount, [organizationId])
          yield* query(client, deleteUnheld, [holder, organizationId])
          yield* query(client, returnHeld, [holder, organizationId])
        })), { discard: true })
  })
