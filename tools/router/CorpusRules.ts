/**
 * Rows of the corpus the training leaves out, each by a written rule that follows a note of the corpus's own README
 * (never a judgement about one prompt): CS1QA questions that quote an error are really debugging requests ("some are
 * really debugging requests"), so they are dropped rather than taught as tutoring. The evaluation drops the same rows.
 */
import type { LabelledPrompt } from "./TrainingCorpus.js"

/** One exclusion rule: the source it applies to, the pattern of the rows it drops, and why. */
export interface ExclusionRule {
  readonly source: string
  readonly pattern: RegExp
  readonly reason: string
}

/** The rules, as recorded in the weights' provenance and the README. */
export const EXCLUSION_RULES: ReadonlyArray<ExclusionRule> = [
  {
    source: "cs1qa",
    pattern: /traceback|error|exception/i,
    reason: "CS1QA questions quoting an error are debugging requests labelled as tutoring (corpus README, known biases)"
  }
]

/** The rows no rule drops, in their order. */
export const usableRows = (rows: ReadonlyArray<LabelledPrompt>): Array<LabelledPrompt> =>
  rows.filter((row) => !EXCLUSION_RULES.some((rule) => rule.source === row.source && rule.pattern.test(row.text)))
