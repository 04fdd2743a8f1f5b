/**
 * Whether a planned question is read, given the readings of the questions before it. Every condition must hold.
 * `answer_in` (the public `ask_if`) holds when the named question's modal alternative is listed;
 * `probability_at_least` holds when the named alternative's probability reaches the minimum. A condition on a
 * question that was itself not read (skipped, or not reached) fails with `was: null`. The skip record of a
 * `probability_at_least` condition carries the modal alternative in `was` and the wanted alternative in `wanted`.
 */
import { modalAlternative } from "./Answers.js"
import type { PlannedQuestion } from "./DecisionPlan.js"

/** Why a question was not read: the question its condition named, that question's modal answer, and what was wanted. */
export interface Skip {
  readonly because: string
  readonly was: string | null
  readonly wanted: ReadonlyArray<string>
}

/** The first failed condition of `question` as a skip record, or null when the question is to be read. */
export const skipReason = (
  question: PlannedQuestion,
  questions: ReadonlyMap<string, PlannedQuestion>,
  readings: ReadonlyMap<string, ReadonlyArray<number>>
): Skip | null => {
  for (const condition of question.conditions) {
    const wanted = condition.kind === "answer_in" ? condition.answers : [condition.alternative]
    const target = questions.get(condition.question)
    const probabilities = readings.get(condition.question)
    if (target === undefined || probabilities === undefined) {
      return { because: condition.question, was: null, wanted }
    }
    const modal = modalAlternative(target.options, probabilities)
    const holds = condition.kind === "answer_in"
      ? condition.answers.includes(modal.name)
      : (probabilities[target.options.findIndex((option) => option.name === condition.alternative)] ?? 0) >=
        condition.min
    if (!holds) return { because: condition.question, was: modal.name, wanted }
  }
  return null
}
