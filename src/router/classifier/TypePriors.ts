/**
 * What each task type usually is, written for this project from the taxonomy's descriptions (and, for difficulty,
 * from the corpus's labels where it has them: MATH levels, OlympiadBench, GSM8K, DebugBench's LeetCode levels).
 * The difficulty prior is P(easy, medium, hard); the facet priors are the probability that a task of the type
 * needs code in its answer, several dependent steps, or tools. The classifier mixes them by its task-type
 * distribution, then the prompt's own signals move them (`DifficultyModel.ts`, `FacetRules.ts`).
 */

/** The priors of one task type. */
export interface TypePrior {
  readonly difficulty: readonly [number, number, number]
  readonly codeOutput: number
  readonly multiStep: number
  readonly tools: number
}

const prior = (difficulty: readonly [number, number, number], codeOutput: number, multiStep: number, tools: number): TypePrior => ({
  difficulty,
  codeOutput,
  multiStep,
  tools
})

/** Priors by task type id. */
export const TYPE_PRIORS: ReadonlyMap<string, TypePrior> = new Map([
  ["coding.code_generation", prior([0.35, 0.45, 0.2], 0.95, 0.4, 0.1)],
  ["coding.code_editing", prior([0.35, 0.45, 0.2], 0.95, 0.4, 0.1)],
  ["coding.debugging", prior([0.3, 0.45, 0.25], 0.85, 0.6, 0.15)],
  ["coding.agentic_software_engineering", prior([0.05, 0.35, 0.6], 0.9, 0.95, 0.95)],
  ["coding.scientific_computing", prior([0.15, 0.45, 0.4], 0.95, 0.6, 0.15)],
  ["coding.code_review_explanation", prior([0.4, 0.45, 0.15], 0.25, 0.3, 0.05)],
  ["coding.sql_data_transformation", prior([0.45, 0.4, 0.15], 0.95, 0.3, 0.1)],
  ["math.competition", prior([0.05, 0.3, 0.65], 0.05, 0.85, 0.05)],
  ["math.applied_quantitative", prior([0.6, 0.3, 0.1], 0.02, 0.5, 0.05)],
  ["math.research_proofs", prior([0.05, 0.3, 0.65], 0.05, 0.8, 0.02)],
  ["reasoning.logic_puzzles", prior([0.3, 0.45, 0.25], 0.02, 0.7, 0.02)],
  ["reasoning.scientific_qa", prior([0.15, 0.45, 0.4], 0.02, 0.7, 0.05)],
  ["reasoning.analysis_decision", prior([0.3, 0.5, 0.2], 0.02, 0.6, 0.1)],
  ["knowledge.factual_qa", prior([0.8, 0.15, 0.05], 0.01, 0.1, 0.15)],
  ["knowledge.expert_domain", prior([0.25, 0.5, 0.25], 0.02, 0.3, 0.1)],
  ["knowledge.explanation_tutoring", prior([0.55, 0.35, 0.1], 0.05, 0.3, 0.02)],
  ["agentic.tool_use_conversation", prior([0.5, 0.35, 0.15], 0.2, 0.6, 0.95)],
  ["agentic.terminal_automation", prior([0.4, 0.4, 0.2], 0.85, 0.6, 0.85)],
  ["agentic.professional_workflows", prior([0.2, 0.5, 0.3], 0.2, 0.85, 0.9)],
  ["agentic.research_synthesis", prior([0.15, 0.45, 0.4], 0.02, 0.9, 0.9)],
  ["long_context.document_qa", prior([0.35, 0.45, 0.2], 0.02, 0.3, 0.05)],
  ["long_context.multi_document_synthesis", prior([0.1, 0.5, 0.4], 0.02, 0.7, 0.05)],
  ["long_context.codebase_understanding", prior([0.1, 0.45, 0.45], 0.4, 0.6, 0.2)],
  ["writing.creative", prior([0.4, 0.45, 0.15], 0.01, 0.2, 0.01)],
  ["writing.professional", prior([0.45, 0.45, 0.1], 0.01, 0.2, 0.01)],
  ["writing.editing_rewriting", prior([0.7, 0.25, 0.05], 0.01, 0.1, 0.01)],
  ["writing.summarization", prior([0.6, 0.3, 0.1], 0.01, 0.15, 0.01)],
  ["multilingual.translation", prior([0.6, 0.3, 0.1], 0.01, 0.1, 0.01)],
  ["multilingual.non_english_assistant", prior([0.5, 0.35, 0.15], 0.05, 0.3, 0.05)],
  ["general.chat_assistant", prior([0.75, 0.2, 0.05], 0.01, 0.15, 0.05)],
  ["general.classification_extraction", prior([0.7, 0.25, 0.05], 0.3, 0.1, 0.02)],
  ["general.image_understanding", prior([0.5, 0.35, 0.15], 0.02, 0.3, 0.1)],
  ["general.format_constrained", prior([0.5, 0.4, 0.1], 0.15, 0.3, 0.01)]
])

/** The prior of a task type the table does not list (another taxonomy's type): even difficulty, facets unsure. */
export const UNKNOWN_TYPE_PRIOR: TypePrior = prior([1 / 3, 1 / 3, 1 / 3], 0.2, 0.4, 0.2)

/** The prior of a task type. */
export const typePrior = (taskType: string): TypePrior => TYPE_PRIORS.get(taskType) ?? UNKNOWN_TYPE_PRIOR
