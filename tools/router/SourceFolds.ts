/**
 * The validation split, grouped by source: every corpus source belongs to exactly one of FOLDS folds, so a model
 * is always judged on sources it never saw (it cannot score by recognizing a dataset's style). Sources are dealt
 * largest first, each to the fold holding the fewest sources of the same task types (so a type known from several
 * sources keeps one in training whenever it can), then the fewest rows, then the lowest number; equal sources go
 * by name. The split depends only on the corpus. The hand-written seeds are in no fold: they are always trained on.
 */

/** Number of folds of the cross-validation. */
export const FOLDS = 5

/** What the split reads of a row. */
export interface FoldedRow {
  readonly source: string
  readonly family: string
  readonly taskType: string | null
}

/** The fold of every source (the seed source excluded). */
export const sourceFolds = (rows: ReadonlyArray<FoldedRow>, seedSource = "seed", folds = FOLDS): ReadonlyMap<string, number> => {
  const counts = new Map<string, number>()
  const types = new Map<string, Set<string>>()
  for (const row of rows) {
    if (row.source === seedSource) continue
    counts.set(row.source, (counts.get(row.source) ?? 0) + 1)
    const own = types.get(row.source) ?? new Set<string>()
    own.add(row.taskType ?? row.family)
    types.set(row.source, own)
  }
  const ordered = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  const sizes = new Array<number>(folds).fill(0)
  const typeCounts = Array.from({ length: folds }, () => new Map<string, number>())
  const assignment = new Map<string, number>()
  for (const [source, count] of ordered) {
    const own = [...types.get(source)!]
    const clash = (fold: number) => own.reduce((sum, type) => sum + (typeCounts[fold]!.get(type) ?? 0), 0)
    let fold = 0
    for (let candidate = 1; candidate < folds; candidate++) {
      const better = clash(candidate) < clash(fold) || (clash(candidate) === clash(fold) && sizes[candidate]! < sizes[fold]!)
      if (better) fold = candidate
    }
    assignment.set(source, fold)
    sizes[fold] = sizes[fold]! + count
    for (const type of own) typeCounts[fold]!.set(type, (typeCounts[fold]!.get(type) ?? 0) + 1)
  }
  return assignment
}
