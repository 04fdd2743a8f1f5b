/**
 * This process's escrow (the escrow transactional method; the demarcation protocol): per organization, the slice of
 * available credit and remaining quota its lease holds (ledger_leases), and what the runs it admitted against the
 * slice hold of it. Admission takes from a slice in memory when the slice covers the run (`reserve`); PostgreSQL
 * re-checks the same bound when the run is stored, so a slice shrunk by another process is never overdrawn. Pure
 * bookkeeping, no I/O: amounts come from the database (`observe`, newest version wins); holds are this process's own.
 * Slice sizes follow the organization's recent admission rate (`target`), so busy organizations lease ahead of need.
 */

/** What one run holds: its spend ceiling (credit and spend quota) and its token reservation. */
export interface Needs {
  readonly micros: number
  readonly tokens: number
}

/** One dimension of a lease: the amount leased and what admitted runs hold of it. */
interface Part {
  amount: number
  held: number
}

/** A lease as PostgreSQL has it (the columns the escrow mirrors). */
export interface LeaseRow {
  readonly id: string
  readonly organization_id: string
  readonly period: string
  readonly billing: boolean
  readonly spend_limited: boolean
  readonly tokens_limited: boolean
  readonly revoked: boolean
  readonly credit_micros: number
  readonly spend_micros: number
  readonly tokens: number
  readonly version: number
}

interface Slice {
  readonly leaseId: string
  readonly organizationId: string
  readonly period: string
  readonly billing: boolean
  readonly spendLimited: boolean
  readonly tokensLimited: boolean
  version: number
  usable: boolean
  readonly credit: Part
  readonly spend: Part
  readonly tokens: Part
}

/** A run's claim on a slice: the lease and what it holds of each dimension (0 where the dimension is unlimited). */
export interface Reservation {
  readonly leaseId: string
  readonly organizationId: string
  readonly period: string
  /** With billing on when leased: the run holds credit. */
  readonly holdCredit: boolean
  readonly credit: number
  readonly spend: number
  readonly tokens: number
}

/** Runs a slice should cover at the organization's recent rate: two seconds of them, 4 to 512. */
export const SliceSeconds = 2
export const MinSliceRuns = 4
export const MaxSliceRuns = 512

const free = (part: Part) => part.amount - part.held

export class Escrow {
  private readonly slices = new Map<string, Slice>()
  private readonly byLease = new Map<string, Slice>()
  /** How each organization's admissions have been arriving (for slice sizes). */
  private readonly rates = new Map<string, { perSecond: number; tokensPerRun: number; lastAt: number }>()

  /** Takes `needs` from the organization's slice for `period` when it covers them; undefined otherwise. */
  reserve(organizationId: string, period: string, needs: Needs): Reservation | undefined {
    const slice = this.slices.get(organizationId)
    if (slice === undefined || !slice.usable || slice.period !== period) return undefined
    const credit = slice.billing ? needs.micros : 0
    const spend = slice.spendLimited ? needs.micros : 0
    const tokens = slice.tokensLimited ? needs.tokens : 0
    if (credit > free(slice.credit) || spend > free(slice.spend) || tokens > free(slice.tokens)) return undefined
    slice.credit.held += credit
    slice.spend.held += spend
    slice.tokens.held += tokens
    return { leaseId: slice.leaseId, organizationId, period, holdCredit: slice.billing, credit, spend, tokens }
  }

  /** Gives a reservation's holds back to its slice (the run was refused, replayed, or has settled). */
  release(reservation: Reservation): void {
    const slice = this.byLease.get(reservation.leaseId)
    if (slice === undefined) return
    slice.credit.held = Math.max(0, slice.credit.held - reservation.credit)
    slice.spend.held = Math.max(0, slice.spend.held - reservation.spend)
    slice.tokens.held = Math.max(0, slice.tokens.held - reservation.tokens)
    if (!slice.usable && slice.credit.held === 0 && slice.spend.held === 0 && slice.tokens.held === 0) {
      this.byLease.delete(slice.leaseId)
    }
  }

  /** Mirrors a lease as PostgreSQL returned it (an older version than already seen changes nothing). */
  observe(row: LeaseRow): void {
    const known = this.byLease.get(row.id)
    if (known !== undefined && known.version >= row.version) return
    if (known !== undefined) {
      known.version = row.version
      known.usable = !row.revoked
      known.credit.amount = row.credit_micros
      known.spend.amount = row.spend_micros
      known.tokens.amount = row.tokens
      if (row.revoked) this.forget(known)
      return
    }
    if (row.revoked) return
    const current = this.slices.get(row.organization_id)
    if (current !== undefined && current.period > row.period) return
    const slice: Slice = {
      leaseId: row.id,
      organizationId: row.organization_id,
      period: row.period,
      billing: row.billing,
      spendLimited: row.spend_limited,
      tokensLimited: row.tokens_limited,
      version: row.version,
      usable: true,
      credit: { amount: row.credit_micros, held: 0 },
      spend: { amount: row.spend_micros, held: 0 },
      tokens: { amount: row.tokens, held: 0 }
    }
    if (current !== undefined) this.forget(current)
    this.slices.set(row.organization_id, slice)
    this.byLease.set(row.id, slice)
  }

  /** Stops admitting against every lease (the process was taken for dead, or stops). */
  retireAll(): void {
    for (const slice of [...this.slices.values()]) this.forget(slice)
  }

  /** Notes an admission for the rate the organization's slices are sized by. */
  noteAdmission(organizationId: string, needs: Needs, now: number): void {
    const rate = this.rates.get(organizationId)
    if (rate === undefined) {
      this.rates.set(organizationId, { perSecond: 1, tokensPerRun: needs.tokens, lastAt: now })
      return
    }
    const gap = Math.max(1, now - rate.lastAt) / 1000
    const weight = Math.min(1, gap)
    rate.perSecond = (1 - weight) * rate.perSecond + weight * (1 / gap)
    rate.tokensPerRun = 0.9 * rate.tokensPerRun + 0.1 * needs.tokens
    rate.lastAt = now
  }

  /** What a slice of the organization should hold: `SliceSeconds` of its recent rate, within the bounds. */
  target(organizationId: string, ceilingMicros: number): Needs {
    const rate = this.rates.get(organizationId)
    const runs = Math.min(MaxSliceRuns, Math.max(MinSliceRuns, Math.ceil((rate?.perSecond ?? 1) * SliceSeconds)))
    return { micros: runs * ceilingMicros, tokens: Math.ceil(runs * (rate?.tokensPerRun ?? 0)) }
  }

  /** Whether the organization's slice has fallen under half its target (a top-up is due), or has none. */
  wantsTopUp(organizationId: string, period: string, ceilingMicros: number): boolean {
    const slice = this.slices.get(organizationId)
    if (slice === undefined || !slice.usable || slice.period !== period) return true
    const target = this.target(organizationId, ceilingMicros)
    return (slice.billing && free(slice.credit) < target.micros / 2) ||
      (slice.spendLimited && free(slice.spend) < target.micros / 2) ||
      (slice.tokensLimited && free(slice.tokens) < target.tokens / 2)
  }

  /**
   * Stops admitting against the slices no admission used since `idleSince` (epoch ms) and names their
   * organizations, whose leases are then returned.
   */
  takeIdle(idleSince: number): ReadonlyArray<string> {
    const organizations: Array<string> = []
    for (const slice of [...this.slices.values()]) {
      const rate = this.rates.get(slice.organizationId)
      if (rate !== undefined && rate.lastAt >= idleSince) continue
      organizations.push(slice.organizationId)
      this.rates.delete(slice.organizationId)
      this.forget(slice)
    }
    return organizations
  }

  private forget(slice: Slice): void {
    slice.usable = false
    if (this.slices.get(slice.organizationId) === slice) this.slices.delete(slice.organizationId)
    if (slice.credit.held === 0 && slice.spend.held === 0 && slice.tokens.held === 0) this.byLease.delete(slice.leaseId)
  }
}
