/**
 * The questions the decision model answers to classify a task, in the public wire shape of decision-run questions
 * (decisions.md, Runs and Router): the family (a `choice` over the taxonomy's families), the task type within a
 * family (one `choice` per family, its task types as options), the difficulty (a `score` over five levels) and
 * facets (`noul` propositions). Which task-type questions to ask is the caller's choice (families of 5% or more).
 */
import { DIFFICULTY_LEVELS } from "./Difficulty.js"

/**
 * What the questions read of a taxonomy: its families and each family's task types (the router's `Taxonomy` is one;
 * the embedded classifier builds one from its labels).
 */
export interface QuestionTaxonomy {
  readonly families: ReadonlyArray<string>
  readonly taskTypesByFamily: ReadonlyMap<string, ReadonlyArray<{ readonly id: string; readonly description: string }>>
}

/** A `choice` question: option names mapped to descriptions. */
export interface ChoiceQuestion {
  readonly type: "choice"
  readonly instructions: string
  readonly criteria: Readonly<Record<string, string | null>>
}

/** A `score` question: ordered level names, lowest first. */
export interface ScoreQuestion {
  readonly type: "score"
  readonly instructions: string
  readonly criteria: ReadonlyArray<string>
}

/** A `noul` question: a yes/no proposition about the task. */
export interface NoulQuestion {
  readonly type: "noul"
  readonly instructions: string
}

/** One classification question in the decision-run wire shape. */
export type ClassificationQuestion = ChoiceQuestion | ScoreQuestion | NoulQuestion

/** The classification question set; `family` is null and `taskTypes` empty when the caller fixed the task. */
export interface ClassificationQuestionSet {
  readonly family: ChoiceQuestion | null
  readonly taskTypes: Readonly<Record<string, ChoiceQuestion>>
  readonly difficulty: ScoreQuestion
  readonly facets: Readonly<Record<string, NoulQuestion>>
}

/** What the caller fixed in the request (`task_type` wins over `domain`). */
export interface FixedTask {
  readonly taskType?: string | undefined
  readonly domain?: string | undefined
}

/** Descriptions of the nine families of the shipped taxonomy; another family is described by its task types. */
export const FAMILY_DESCRIPTIONS: Readonly<Record<string, string>> = {
  coding: "Writing, changing, debugging, reviewing or explaining program code, scripts or SQL.",
  math: "Mathematics: competition problems, everyday quantitative calculations, proofs and research mathematics.",
  reasoning: "Logic puzzles, graduate-level science questions, and open-ended analysis, planning or decisions.",
  knowledge: "Factual questions, professional-domain knowledge (law, medicine, finance) and teaching a topic.",
  agentic: "Multi-step work carried out with tools: tool calls in a conversation, a terminal, research with sources.",
  long_context:
    "Questions or changes that need a very long input read in full: long documents, many documents, a codebase.",
  writing: "Producing or improving prose: creative writing, professional texts, editing, summaries.",
  multilingual: "Translation, or a conversation or answer in a language other than English.",
  general: "Everyday assistant requests, classification or extraction, questions about images, strict output formats."
}

/** The facet propositions, each read as the probability that it is true of the task. */
export const FACETS: Readonly<Record<string, string>> = {
  needs_code_output:
    "The answer must contain source code, a shell command, a query or another machine-readable program text.",
  needs_long_context:
    "Doing the task requires reading a long input in full: documents, logs or code of many thousands of words.",
  multi_step:
    "Doing the task well takes several dependent steps (plan, act, check) rather than one direct answer.",
  non_english: "The request is written in, or asks for an answer in, a language other than English.",
  needs_tools:
    "The task needs actions outside the text: running code, searching the web, calling APIs or editing files."
}

/** The name of the task-type question of a family, e.g. `task_type.coding`. */
export const taskTypeQuestionName = (family: string): string => `task_type.${family}`

const familyDescription = (taxonomy: QuestionTaxonomy, family: string): string =>
  FAMILY_DESCRIPTIONS[family] ??
    (taxonomy.taskTypesByFamily.get(family) ?? []).map((type) => type.description).join(" ")

const familyQuestion = (taxonomy: QuestionTaxonomy): ChoiceQuestion => ({
  type: "choice",
  instructions: "Which family of tasks does this request belong to? Judge the work the user wants done, not the " +
    "topic it mentions: writing code that simulates chemistry is coding, explaining chemistry is knowledge.",
  criteria: Object.fromEntries(taxonomy.families.map((family) => [family, familyDescription(taxonomy, family)]))
})

const taskTypeQuestion = (taxonomy: QuestionTaxonomy, family: string): ChoiceQuestion => ({
  type: "choice",
  instructions: `This request is a ${family} task. Which kind of ${family} task is it? Pick the closest option.`,
  criteria: Object.fromEntries(
    (taxonomy.taskTypesByFamily.get(family) ?? []).map((type) => [type.id, type.description])
  )
})

const difficultyQuestion: ScoreQuestion = {
  type: "score",
  instructions: "How hard is this task for a capable AI model to do well? Levels, lowest first: " +
    DIFFICULTY_LEVELS.map((level) => `${level.name} (${level.description})`).join("; ") + ".",
  criteria: DIFFICULTY_LEVELS.map((level) => level.name)
}

/**
 * The questions that classify a task. A fixed task type or domain removes the family and task-type questions;
 * a family with a single task type has no task-type question (its type is certain).
 */
export const classificationQuestions = (taxonomy: QuestionTaxonomy, fixed: FixedTask): ClassificationQuestionSet => {
  const isFixed = fixed.taskType !== undefined || fixed.domain !== undefined
  return {
    family: isFixed ? null : familyQuestion(taxonomy),
    taskTypes: isFixed ? {} : Object.fromEntries(
      taxonomy.families
        .filter((family) => (taxonomy.taskTypesByFamily.get(family)?.length ?? 0) >= 2)
        .map((family) => [family, taskTypeQuestion(taxonomy, family)])
    ),
    difficulty: difficultyQuestion,
    facets: Object.fromEntries(
      Object.entries(FACETS).map(([name, instructions]) => [name, { type: "noul", instructions } as NoulQuestion])
    )
  }
}
