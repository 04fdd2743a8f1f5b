/**
 * How much each training row counts, so that no family, type or source dominates by size: every family gets the
 * same total; within a family a type gets a share growing with the square root of its rows (up to TYPE_CAP rows),
 * so a type known from a hundred prompts is not weighted like one known from thousands; within a type a source
 * gets a share growing with the square root of its rows, except the hand-written seeds, which get SEED_SHARE of
 * their type (all of it for a type with no corpus rows). The weights are scaled to average 1 and capped at
 * MAX_WEIGHT (MAX_SEED_WEIGHT for a seed), so no single prompt can be memorized.
 */

/** What the weighting reads of a row. */
export interface WeightedRow {
  readonly family: string
  readonly taskType: string | null
  readonly source: string
}

/** Rows beyond which a type's share stops growing. */
export const TYPE_CAP = 1000

/** Share of a type's weight its seeds get when the corpus has rows of the type too. */
export const SEED_SHARE = 0.5

/** The largest weight of one corpus row, after scaling to an average of 1. */
export const MAX_WEIGHT = 12

/** The largest weight of one seed row. */
export const MAX_SEED_WEIGHT = 24

const groupCounts = (keys: ReadonlyArray<string>): Map<string, number> => {
  const counts = new Map<string, number>()
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1)
  return counts
}

/** The weight of every row (in the rows' order), averaging 1. */
export const sampleWeights = (rows: ReadonlyArray<WeightedRow>, seedSource = "seed"): Float64Array => {
  const typeOf = (row: WeightedRow) => `${row.family}/${row.taskType ?? ""}`
  const typeRows = groupCounts(rows.map(typeOf))
  const sourceRows = groupCounts(rows.map((row) => `${typeOf(row)}|${row.source}`))
  const typeMass = new Map<string, number>()
  for (const [type, count] of typeRows) typeMass.set(type, Math.sqrt(Math.min(count, TYPE_CAP)))
  const familyMass = new Map<string, number>()
  for (const [type, mass] of typeMass) {
    const family = type.slice(0, type.indexOf("/"))
    familyMass.set(family, (familyMass.get(family) ?? 0) + mass)
  }
  const isSeed = (key: string) => key.endsWith(`|${seedSource}`)
  const corpusMass = new Map<string, number>()
  const seeded = new Set<string>()
  for (const [key, count] of sourceRows) {
    const type = key.slice(0, key.indexOf("|"))
    if (isSeed(key)) seeded.add(type)
    else corpusMass.set(type, (corpusMass.get(type) ?? 0) + Math.sqrt(count))
  }
  const sourceShare = (type: string, key: string, count: number): number => {
    const corpus = corpusMass.get(type)
    if (isSeed(key)) return corpus === undefined ? 1 : SEED_SHARE
    return (seeded.has(type) ? 1 - SEED_SHARE : 1) * Math.sqrt(count) / corpus!
  }
  const raw = Float64Array.from(rows, (row) => {
    const type = typeOf(row)
    const key = `${type}|${row.source}`
    const count = sourceRows.get(key)!
    const familyShare = typeMass.get(type)! / familyMass.get(row.family)!
    return (familyShare * sourceShare(type, key, count)) / count
  })
  const mean = raw.reduce((sum, value) => sum + value, 0) / Math.max(1, raw.length)
  return raw.map((value, index) => Math.min(rows[index]!.source === seedSource ? MAX_SEED_WEIGHT : MAX_WEIGHT, value / mean))
}
