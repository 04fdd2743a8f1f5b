/**
 * The compiled form of a decision's question set: each question with its options in order, the questions it
 * depends on, the conditions that decide whether it is read, and its stage. Stages follow topological order: a
 * question's stage is one more than the highest stage of what it depends on, so stage 0 holds the questions that
 * depend on nothing. Conditions are data (never functions) so a plan can be logged, compared and tested.
 */
import { Result } from "effect"
import type { QuestionOption, QuestionType } from "../providers/ModelProvider.js"

/** The public `ask_if` entry: read only when the named question's most probable alternative is in `answers`. */
export interface AnswerInCondition {
  readonly kind: "answer_in"
  readonly question: string
  readonly answers: ReadonlyArray<string>
}

/** An internal condition (never on the wire): read only when P(`question` = `alternative`) >= `min`. */
export interface ProbabilityAtLeastCondition {
  readonly kind: "probability_at_least"
  readonly question: string
  readonly alternative: string
  readonly min: number
}

/** A condition on an earlier question's answer; every condition of a question must hold for it to be read. */
export type Condition = AnswerInCondition | ProbabilityAtLeastCondition

/** A question ready to be read. */
export interface PlannedQuestion {
  readonly id: string
  readonly type: QuestionType
  readonly instructions: string
  /** Alternatives in their defined order (`noul`: yes, no; `score`: lowest level first). */
  readonly options: ReadonlyArray<QuestionOption>
  /** Questions whose answers this one's read carries (unless `alone`); includes every condition's question. */
  readonly dependsOn: ReadonlyArray<string>
  readonly conditions: ReadonlyArray<Condition>
  readonly alone: boolean
  readonly stage: number
}

/** A validated question set: the questions in their given order and the same questions grouped by stage. */
export interface DecisionPlan {
  readonly questions: ReadonlyArray<PlannedQuestion>
  readonly stages: ReadonlyArray<ReadonlyArray<PlannedQuestion>>
}

/** A question before its stage is known. */
export type UnstagedQuestion = Omit<PlannedQuestion, "stage">

const describeCycle = (path: ReadonlyArray<string>): string => path.map((id) => JSON.stringify(id)).join(" -> ")

/**
 * Stages a set of questions whose dependencies all exist, or names the first cycle found (questions visited in
 * their given order, dependencies in their listed order, so the message is deterministic).
 */
export const stageQuestions = (questions: ReadonlyArray<UnstagedQuestion>): Result.Result<DecisionPlan, string> => {
  const byId = new Map(questions.map((question) => [question.id, question]))
  const stageOf = new Map<string, number>()
  const onPath: Array<string> = []
  const visiting = new Set<string>()

  const visit = (id: string): string | null => {
    if (stageOf.has(id)) return null
    if (visiting.has(id)) return `questions form a cycle: ${describeCycle([...onPath.slice(onPath.indexOf(id)), id])}`
    visiting.add(id)
    onPath.push(id)
    let stage = 0
    for (const dependency of byId.get(id)?.dependsOn ?? []) {
      const cycle = visit(dependency)
      if (cycle !== null) return cycle
      stage = Math.max(stage, (stageOf.get(dependency) ?? 0) + 1)
    }
    onPath.pop()
    visiting.delete(id)
    stageOf.set(id, stage)
    return null
  }

  for (const question of questions) {
    const cycle = visit(question.id)
    if (cycle !== null) return Result.fail(cycle)
  }
  const planned = questions.map((question) => ({ ...question, stage: stageOf.get(question.id) ?? 0 }))
  const stageCount = planned.reduce((max, question) => Math.max(max, question.stage + 1), 0)
  const stages = Array.from({ length: stageCount }, (_, stage) => planned.filter((question) => question.stage === stage))
  return Result.succeed({ questions: planned, stages })
}
