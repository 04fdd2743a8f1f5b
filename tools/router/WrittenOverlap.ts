/**
 * The rule that keeps the evaluation honest when one hand writes both the training prompts and the held-out sets: a
 * written training row whose words overlap an evaluation prompt's by a Jaccard index of OVERLAP_LIMIT or more is left
 * out of training, so no held-out prompt is judged by a model that learned a near-copy of it. Words are lower-cased
 * runs of letters and digits; text in unspaced scripts (Chinese, Japanese, Thai) counts by character pairs, the
 * nearest thing it has to words. The training and the evaluation both apply it, against every hand-written set the
 * evaluation classifies (`EVALUATION_PATHS`).
 */
import { readFileSync } from "node:fs"
import type { LabelledPrompt } from "./TrainingCorpus.js"

/** The Jaccard index at or above which a written row is too close to an evaluation prompt to train on. */
export const OVERLAP_LIMIT = 0.6

const UNSPACED_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}ー]+/gu
const WORD = /[\p{L}\p{N}]+/gu

/** The words of a text, and the character pairs of its runs in unspaced scripts (a lone character as itself). */
export const overlapTokens = (text: string): Set<string> => {
  const lower = text.toLowerCase()
  const tokens = new Set<string>(lower.replace(UNSPACED_RUN, " ").match(WORD) ?? [])
  for (const run of lower.match(UNSPACED_RUN) ?? []) {
    const chars = [...run]
    if (chars.length === 1) tokens.add(chars[0]!)
    for (let index = 0; index + 1 < chars.length; index++) tokens.add(chars[index]! + chars[index + 1]!)
  }
  return tokens
}

/** |a ∩ b| / |a ∪ b|; 0 for two empty sets. */
export const jaccard = (a: ReadonlySet<string>, b: ReadonlySet<string>): number => {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a]
  let shared = 0
  for (const token of small) if (large.has(token)) shared++
  const union = a.size + b.size - shared
  return union === 0 ? 0 : shared / union
}

/** The written rows split into those kept and those left out for overlapping an evaluation prompt. */
export interface OverlapSplit {
  readonly kept: ReadonlyArray<LabelledPrompt>
  readonly leftOut: ReadonlyArray<LabelledPrompt>
}

/** Splits the written rows by the rule, against the texts of every evaluation prompt. */
export const withoutOverlaps = (written: ReadonlyArray<LabelledPrompt>, evaluation: ReadonlyArray<string>): OverlapSplit => {
  const held = evaluation.map(overlapTokens)
  const kept: Array<LabelledPrompt> = []
  const leftOut: Array<LabelledPrompt> = []
  for (const row of written) {
    const tokens = overlapTokens(row.text)
    const into = held.some((other) => jaccard(tokens, other) >= OVERLAP_LIMIT) ? leftOut : kept
    into.push(row)
  }
  return { kept, leftOut }
}

/** The prompt texts of the evaluation's hand-written sets (JSON lines with a `text` each). */
export const evaluationTexts = (paths: ReadonlyArray<string>): Array<string> =>
  paths.flatMap((path) =>
    readFileSync(path, "utf8").split("\n").flatMap((line) => (line.trim() === "" ? [] : [String((JSON.parse(line) as { text: unknown }).text)])))
