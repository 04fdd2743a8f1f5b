/**
 * The difficulty scale: the five ordered levels the decision model scores a task on (its 0-1 `score` is the
 * expected level index over 4) and the v1 labels: `easy` < 0.34 <= `medium` < 0.67 <= `hard` (decisions.md,
 * Router). Levels map to labels by their own score: trivial 0 and easy 0.25 are `easy`, moderate 0.5 is `medium`,
 * hard 0.75 and expert 1 are `hard`. The wire label is the most probable label (docs/decisions.md, Router), and the
 * score ranking reads is kept inside that label's band, so label, probabilities and score never disagree.
 */

/** The v1 difficulty labels. */
export type DifficultyLabel = "easy" | "medium" | "hard"

/** The v1 labels in order. */
export const DIFFICULTY_LABELS: ReadonlyArray<DifficultyLabel> = ["easy", "medium", "hard"]

/** A score at or above this is `medium` (decisions.md). */
export const MEDIUM_FROM = 0.34

/** A score at or above this is `hard` (decisions.md). */
export const HARD_FROM = 0.67

/** The levels of the difficulty `score` question, lowest first, with what each means to the decision model. */
export const DIFFICULTY_LEVELS: ReadonlyArray<{ readonly name: string; readonly description: string }> = [
  { name: "trivial", description: "a lookup, a greeting or a one-line answer any assistant gets right" },
  { name: "easy", description: "a routine request with a well-known answer or a short standard procedure" },
  { name: "moderate", description: "several steps or some domain knowledge; a careless answer would have mistakes" },
  { name: "hard", description: "expert knowledge or long careful reasoning; strong models still get it wrong" },
  { name: "expert", description: "research-level or competition-level work at the edge of what models can do" }
]

/** The v1 label of a 0-1 difficulty score. */
export const difficultyLabel = (score: number): DifficultyLabel =>
  score >= HARD_FROM ? "hard" : score >= MEDIUM_FROM ? "medium" : "easy"

/** The highest score a most probable `easy` keeps (the band edge a score is moved to). */
export const EASY_UP_TO = 0.33

/** The highest score a most probable `medium` keeps. */
export const MEDIUM_UP_TO = 0.66

/**
 * The wire label: the most probable label; among labels tied for the most probable, the one nearest the score's
 * own label (the lower one when two are equally near).
 */
export const mostProbableLabel = (probabilities: Readonly<Record<DifficultyLabel, number>>, score: number): DifficultyLabel => {
  const top = Math.max(...DIFFICULTY_LABELS.map((label) => probabilities[label]))
  const tied = DIFFICULTY_LABELS.filter((label) => probabilities[label] >= top - 1e-12)
  const own = DIFFICULTY_LABELS.indexOf(difficultyLabel(score))
  return tied.reduce((best, label) =>
    Math.abs(DIFFICULTY_LABELS.indexOf(label) - own) < Math.abs(DIFFICULTY_LABELS.indexOf(best) - own) ? label : best
  )
}

/** The score moved to the nearest value inside a label's band (unchanged when it is already inside). */
export const scoreWithin = (score: number, label: DifficultyLabel): number =>
  label === "easy"
    ? Math.min(score, EASY_UP_TO)
    : label === "medium"
    ? Math.min(Math.max(score, MEDIUM_FROM), MEDIUM_UP_TO)
    : Math.max(score, HARD_FROM)

/** The label probabilities from level probabilities (lowest level first), each level counted under its own score. */
export const labelProbabilities = (levels: ReadonlyArray<number>): Record<DifficultyLabel, number> => {
  const result: Record<DifficultyLabel, number> = { easy: 0, medium: 0, hard: 0 }
  const steps = Math.max(1, levels.length - 1)
  levels.forEach((probability, index) => {
    result[difficultyLabel(index / steps)] += probability
  })
  const total = result.easy + result.medium + result.hard
  return total > 0
    ? { easy: result.easy / total, medium: result.medium / total, hard: result.hard / total }
    : { easy: 0, medium: 1, hard: 0 }
}
