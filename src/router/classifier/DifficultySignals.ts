/**
 * The few generic signals the difficulty estimate reads besides the task type: length, stated constraints, math
 * notation, numbers, code, several steps or questions, and words that say a task is hard or easy. The corpus has
 * difficulty labels only for a few math and coding sources, so the type's prior (`TypePriors.ts`) carries most of
 * the estimate and these signals only move it (their weights are learned on the labelled rows).
 */
import type { PromptFeatures } from "./TextFeatures.js"

/** Number of difficulty signals. */
export const DIFFICULTY_SIGNALS = 9

const CONSTRAINTS = new Set(["must", "should", "exactly", "least", "most", "without", "ensure", "only", "require", "requirements"])
const HARD = /\b(prove|proof|olympiad|optimal|rigorous\w*|efficient\w*|complexity|advanced|research|novel|expert|challenging|difficult|hard|competition|theorem)\b/
const EASY = /\b(simple|basic|quick\w*|easy|beginner|short|briefly|eli5|one sentence|one word|yes or no)\b/
const STEPS = /\b(step by step|then|after that|first|finally|next|afterwards)\b/g

const capped = (value: number): number => Math.min(1, value)

/** The difficulty signals of a prompt, each in [0, 1]. */
export const difficultySignals = (features: PromptFeatures, totalChars: number): Float64Array => {
  const structure = features.structure
  const words = features.words
  const constraints = words.filter((word) => CONSTRAINTS.has(word)).length
  const numbers = words.filter((word) => word === "#").length
  const math = structure.has("latex") || structure.has("arithmetic") || structure.has("mathsymbol")
  const code = structure.has("codelines:some") || structure.has("codelines:most")
  return Float64Array.from([
    capped(Math.log2(1 + totalChars) / 16),
    capped(constraints / 5),
    math ? 1 : 0,
    HARD.test(features.requestText) ? 1 : 0,
    EASY.test(features.requestText) ? 1 : 0,
    capped(numbers / 10),
    code ? 1 : 0,
    capped((features.requestText.match(STEPS) ?? []).length / 4),
    capped((features.requestText.match(/\?/g) ?? []).length / 3)
  ])
}
