/**
 * The classification as one decision run (decisions.md, Router): the questions of `ClassificationQuestions.ts` in
 * the decision-run wire shape, compiled once at start for the two cases (classified, or task type fixed by the
 * caller), the run spec of a request, and the reading of the settled run's answers. Question ids: `family`,
 * `task_type.<family>`, `difficulty` and one per facet. A task-type question carries the internal condition
 * "P(family) >= 5%", so the engine reads it only for the families that reach the floor, after the family question;
 * it is read `alone` (its instructions already name the family). Each read makes one output token.
 */
import { Result } from "effect"
import type { InputTooLarge } from "../../schema/Errors.js"
import type { Question } from "../../schema/RunsApi.js"
import {
  compileInternalQuestions,
  type InternalQuestionSet,
  internalDecisionSpec,
  type RunSpec
} from "../runs/RunSpec.js"
import type { Answer } from "../runs/Answers.js"
import type { FixedTask } from "./classification/ClassificationQuestions.js"
import {
  classificationQuestions,
  type ClassificationAnswers,
  type ClassificationSource,
  taskTypeQuestionName
} from "./Classifier.js"
import { promptExcerpt } from "./classification/PromptExcerpt.js"
import { PROBABILITY_TOLERANCE, TASK_TYPE_FLOOR } from "./ScoringConstants.js"
import type { Taxonomy } from "./Taxonomy.js"

/** The two compiled question sets: the task classified, or its task type fixed by the caller. */
export interface ClassificationPlans {
  readonly classified: InternalQuestionSet
  readonly fixed: InternalQuestionSet
}

const FAMILY = "family"
const DIFFICULTY = "difficulty"
const TASK_TYPE_PREFIX = taskTypeQuestionName("")

const compile = (taxonomy: Taxonomy, fixed: FixedTask): Result.Result<InternalQuestionSet, string> => {
  const set = classificationQuestions(taxonomy, fixed)
  const families = Object.keys(set.taskTypes)
  const questions: Record<string, typeof Question.Type> = {
    ...(set.family === null ? {} : { [FAMILY]: set.family }),
    ...Object.fromEntries(families.map((family) => [taskTypeQuestionName(family), { ...set.taskTypes[family]!, alone: true }])),
    [DIFFICULTY]: set.difficulty,
    ...set.facets
  }
  const internalConditions = Object.fromEntries(families.map((family) => [taskTypeQuestionName(family), [{
    kind: "probability_at_least" as const,
    question: FAMILY,
    alternative: family,
    min: TASK_TYPE_FLOOR - PROBABILITY_TOLERANCE
  }]]))
  return Result.mapError(compileInternalQuestions(questions, { internalConditions }), (error) => error.message)
}

/** Compiles both question sets for a taxonomy; the failure names the rule a question broke. */
export const compileClassification = (taxonomy: Taxonomy): Result.Result<ClassificationPlans, string> =>
  // Any fixed domain gives the same questions (no family or task-type question), so the first one stands for all.
  Result.all({ classified: compile(taxonomy, {}), fixed: compile(taxonomy, { domain: taxonomy.families[0] }) })

/** The decision run that classifies a task: its excerpt against the question set the request needs. */
export const classificationSpec = (
  plans: ClassificationPlans,
  request: { readonly text: string; readonly fixed: FixedTask; readonly digest: string }
): Result.Result<RunSpec, InputTooLarge> => {
  const isFixed = request.fixed.taskType !== undefined || request.fixed.domain !== undefined
  return internalDecisionSpec(isFixed ? plans.fixed : plans.classified, promptExcerpt(request.text), request.digest)
}

const choiceProbabilities = (answer: Answer | null | undefined): Readonly<Record<string, number>> | undefined =>
  answer?.type === "choice" ? answer.probabilities : undefined

/** The classification answers of a completed run's stored output, for `interpretClassification`. */
export const readClassification = (output: unknown, fixed: FixedTask): ClassificationAnswers => {
  const answers = ((output as { decision?: { answers?: Record<string, Answer | null> } } | null)?.decision?.answers) ?? {}
  const source: ClassificationSource = fixed.taskType !== undefined
    ? { fixedTaskType: fixed.taskType, fixedDomain: fixed.domain }
    : fixed.domain !== undefined
    ? { fixedDomain: fixed.domain }
    : { familyProbabilities: choiceProbabilities(answers[FAMILY]) ?? {} }
  const taskTypeProbabilities: Record<string, Readonly<Record<string, number>>> = {}
  const facets: Record<string, number> = {}
  for (const [id, answer] of Object.entries(answers)) {
    const family = id.startsWith(TASK_TYPE_PREFIX) ? id.slice(TASK_TYPE_PREFIX.length) : undefined
    const probabilities = choiceProbabilities(answer)
    if (family !== undefined && probabilities !== undefined) taskTypeProbabilities[family] = probabilities
    if (answer?.type === "noul") facets[id] = answer.probability
  }
  const difficulty = answers[DIFFICULTY]
  return {
    ...source,
    taskTypeProbabilities,
    difficulty: difficulty?.type === "score"
      ? { score: difficulty.score, probabilities: difficulty.probabilities }
      : { score: 0.5, probabilities: [] },
    facets
  }
}
