/**
 * Answer shapes (decisions.md, Runs) from per-option probabilities in the options' own order. Probabilities are
 * renormalized to sum to 1 (within 1e-9; negative or non-finite inputs count as 0, all zeros become uniform).
 * The modal alternative is the most probable, the earliest in order on a tie (so a `noul` at exactly 0.5 is
 * "yes"). `confidence` = 1 - entropy / ln(n); `score` = expected level index / (levels - 1); both clamped to 0..1
 * against rounding.
 */
import type { QuestionOption, QuestionType } from "../providers/ModelProvider.js"

/** A `noul` answer: the probability that the proposition is true. */
export interface NoulAnswer {
  readonly type: "noul"
  readonly probability: number
}

/** A `choice` answer: the modal option, its probability, every option's, and the confidence. */
export interface ChoiceAnswer {
  readonly type: "choice"
  readonly choice: string
  readonly probability: number
  readonly probabilities: Readonly<Record<string, number>>
  readonly confidence: number
}

/** A `score` answer: the expected level on 0..1, the modal level, its probability, every level's, the confidence. */
export interface ScoreAnswer {
  readonly type: "score"
  readonly score: number
  readonly level: string
  readonly probability: number
  readonly probabilities: ReadonlyArray<number>
  readonly confidence: number
}

/** One question's answer as the run returns it. */
export type Answer = NoulAnswer | ChoiceAnswer | ScoreAnswer

const clamp01 = (x: number): number => Math.min(1, Math.max(0, x))

/** Probabilities scaled to sum to 1; negative or non-finite entries count as 0, and all zeros become uniform. */
export const normalizeProbabilities = (probabilities: ReadonlyArray<number>): ReadonlyArray<number> => {
  const cleaned = probabilities.map((p) => (Number.isFinite(p) && p > 0 ? p : 0))
  const total = cleaned.reduce((sum, p) => sum + p, 0)
  if (total === 0 || !Number.isFinite(total)) return cleaned.map(() => 1 / cleaned.length)
  return cleaned.map((p) => p / total)
}

/** 1 - normalized entropy of a distribution: 1 when certain, 0 when uniform. */
export const confidenceOf = (probabilities: ReadonlyArray<number>): number => {
  const n = probabilities.length
  if (n < 2) return 1
  const entropy = probabilities.reduce((sum, p) => (p > 0 ? sum - p * Math.log(p) : sum), 0)
  return clamp01(1 - entropy / Math.log(n))
}

/** The modal alternative's name and probability of a normalized distribution over `options` (the earliest on a tie). */
export const modalAlternative = (
  options: ReadonlyArray<QuestionOption>,
  probabilities: ReadonlyArray<number>
): { readonly name: string; readonly probability: number } => {
  const index = probabilities.reduce((best, p, at) => (p > probabilities[best]! ? at : best), 0)
  return { name: options[index]!.name, probability: probabilities[index]! }
}

/** The answer of a question from its per-option probabilities (any non-negative weights; they are renormalized). */
export const shapeAnswer = (
  question: { readonly type: QuestionType; readonly options: ReadonlyArray<QuestionOption> },
  probabilities: ReadonlyArray<number>
): Answer => {
  const normalized = normalizeProbabilities(probabilities)
  const modal = modalAlternative(question.options, normalized)
  switch (question.type) {
    case "noul":
      return { type: "noul", probability: normalized[0]! }
    case "choice":
      return {
        type: "choice",
        choice: modal.name,
        probability: modal.probability,
        probabilities: Object.fromEntries(question.options.map((option, index) => [option.name, normalized[index]!])),
        confidence: confidenceOf(normalized)
      }
    case "score": {
      const expected = normalized.reduce((sum, p, index) => sum + p * index, 0)
      return {
        type: "score",
        score: clamp01(expected / (normalized.length - 1)),
        level: modal.name,
        probability: modal.probability,
        probabilities: normalized,
        confidence: confidenceOf(normalized)
      }
    }
  }
}

/** An answer as an earlier answer is shown to a later question: the modal alternative and its probability. */
export const answerSummary = (
  options: ReadonlyArray<QuestionOption>,
  probabilities: ReadonlyArray<number>
): string => {
  const modal = modalAlternative(options, probabilities)
  return `${modal.name} (probability ${modal.probability.toFixed(2)})`
}
