/**
 * How much each training row counts, so that no family, type or source dominates by size: every family gets the
 * same total; within a family a type gets a share growing with the square root of its rows (up to TYPE_CAP rows),
 * so a type known from a hundred prompts is not weighted like one known from thousands; within a type a source
 * gets a share growing with the square root of its rows, except the hand-written sources (the seeds, and the
 * conversational prompts written for this project), which together get HAND_WRITTEN_SHARE of their type (all of
 * it for a type with no corpus rows), split among them by the square root of their rows: the corpus is mostly
 * benchmark prompts, and these are the rows written as real users write. The weights are scaled to average 1 and
 * capped at MAX_WEIGHT (MAX_SEED_WEIGHT for a hand-written row), so no single prompt can be memorized.
 */

/** What the weighting reads of a row. */
export interface WeightedRow {
  readonly family: string
  readonly taskType: string | null
  readonly source: string
}

/** Rows beyond which a type's share stops growing. */
export const TYPE_CAP = 1000

/** Share of a type's weight its hand-written rows get when the corpus has rows of the type too. */
export const SEED_SHARE = 0.8

/** The largest weight of one corpus row, after scaling to an average of 1. */
export const MAX_WEIGHT = 12

/** The largest weight of one hand-written row. */
export const MAX_SEED_WEIGHT = 24

/** The source of the seeds (in no fold). */
export const SEED_SOURCE = "seed"

/** The prefix of every batch of conversational prompts written for this project (each batch a fold's source). */
export const WRITTEN_SOURCE_PREFIX = "written_chat"

/** Whether a source was written for this project: the seeds, or a batch named with WRITTEN_SOURCE_PREFIX. */
export const isHandWritten = (source: string): boolean => source === SEED_SOURCE || source.startsWith(WRITTEN_SOURCE_PREFIX)

const groupCounts = (keys: ReadonlyArray<string>): Map<string, number> => {
  const counts = new Map<string, number>()
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1)
  return counts
}

/** Per type, the square-root mass of its corpus sources and of its hand-written sources. */
const sourceMasses = (sourceRows: ReadonlyMap<string, number>, handWritten: (source: string) => boolean) => {
  const corpus = new Map<string, number>()
  const written = new Map<string, number>()
  for (const [key, count] of sourceRows) {
    const at = key.indexOf("|")
    const into = handWritten(key.slice(at + 1)) ? written : corpus
    into.set(key.slice(0, at), (into.get(key.slice(0, at)) ?? 0) + Math.sqrt(count))
  }
  return { corpus, written }
}

/** The weight of every row (in the rows' order), averaging 1. */
export const sampleWeights = (rows: ReadonlyArray<WeightedRow>, handWritten = isHandWritten): Float64Array => {
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
  const masses = sourceMasses(sourceRows, handWritten)
  const sourceShare = (type: string, source: string, count: number): number => {
    const corpus = masses.corpus.get(type)
    const written = masses.written.get(type)
    if (handWritten(source)) return (corpus === undefined ? 1 : SEED_SHARE) * Math.sqrt(count) / written!
    return (written === undefined ? 1 : 1 - SEED_SHARE) * Math.sqrt(count) / corpus!
  }
  const raw = Float64Array.from(rows, (row) => {
    const type = typeOf(row)
    const count = sourceRows.get(`${type}|${row.source}`)!
    const familyShare = typeMass.get(type)! / familyMass.get(row.family)!
    return (familyShare * sourceShare(type, row.source, count)) / count
  })
  const mean = raw.reduce((sum, value) => sum + value, 0) / Math.max(1, raw.length)
  return raw.map((value, index) => Math.min(handWritten(rows[index]!.source) ? MAX_SEED_WEIGHT : MAX_WEIGHT, value / mean))
}
