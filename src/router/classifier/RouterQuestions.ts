/**
 * How the built-in local model knows the router's classification questions and answers them from the classifier.
 * The question set is built once, with `classificationQuestions` over the classifier's own labels, and a read is the
 * router's when its type and instructions match one of those questions exactly and its option names are that
 * question's (in any order, since draws rotate options). A taxonomy whose families or types differ from the
 * classifier's labels does not match, and the local model then answers as it answers any other question.
 */
import { type ClassificationQuestion, classificationQuestions } from "../classification/ClassificationQuestions.js"
import { DIFFICULTY_LEVELS } from "../classification/Difficulty.js"
import type { ClassifierLabels } from "./ClassifierModel.js"
import type { PromptClassification } from "./PromptClassifier.js"

/**
 * A question as it is put to the local model, as much of it as recognizing and answering needs (a model provider's
 * `Read` is one: the classifier depends on no provider).
 */
export interface AskedQuestion {
  /** The text the question is about: the router's prompt excerpt. */
  readonly state: string
  readonly type: string
  readonly instructions: string
  /** The options in the order asked (draws rotate them). */
  readonly options: ReadonlyArray<{ readonly name: string }>
}

/** One of the router's questions, recognized. */
export type RouterQuestion =
  | { readonly kind: "family" }
  | { readonly kind: "task_type"; readonly family: string }
  | { readonly kind: "difficulty" }
  | { readonly kind: "facet"; readonly facet: string }

interface Entry {
  readonly question: RouterQuestion
  readonly type: ClassificationQuestion["type"]
  readonly options: ReadonlySet<string>
}

/** Finds the router question a read asks, or null. */
export type RouterQuestionIndex = (read: AskedQuestion) => RouterQuestion | null

const sameNames = (read: AskedQuestion, expected: ReadonlySet<string>): boolean =>
  read.options.length === expected.size && read.options.every((option) => expected.has(option.name))

/** The index of the router's questions over the classifier's labels. */
export const routerQuestionIndex = (labels: ClassifierLabels): RouterQuestionIndex => {
  const taskTypesByFamily = new Map(labels.families.map((family) => [
    family,
    labels.taskTypes.filter((type) => type.family === family).map((type) => ({ id: type.id, description: "" }))
  ]))
  const set = classificationQuestions({ families: labels.families, taskTypesByFamily }, {})
  const entries = new Map<string, Entry>()
  if (set.family !== null) {
    entries.set(set.family.instructions, { question: { kind: "family" }, type: "choice", options: new Set(Object.keys(set.family.criteria)) })
  }
  for (const [family, question] of Object.entries(set.taskTypes)) {
    entries.set(question.instructions, { question: { kind: "task_type", family }, type: "choice", options: new Set(Object.keys(question.criteria)) })
  }
  entries.set(set.difficulty.instructions, { question: { kind: "difficulty" }, type: "score", options: new Set(set.difficulty.criteria) })
  for (const [facet, question] of Object.entries(set.facets)) {
    entries.set(question.instructions, { question: { kind: "facet", facet }, type: "noul", options: new Set(["yes", "no"]) })
  }
  return (read) => {
    const entry = entries.get(read.instructions)
    return entry !== undefined && entry.type === read.type && sameNames(read, entry.options) ? entry.question : null
  }
}

const LEVEL_INDEX: ReadonlyMap<string, number> = new Map(DIFFICULTY_LEVELS.map((level, index) => [level.name, index]))

/** The classifier's answer to a recognized question, one probability per option in the read's order. */
export const answerRouterQuestion = (
  question: RouterQuestion,
  read: AskedQuestion,
  classification: PromptClassification
): ReadonlyArray<number> => {
  switch (question.kind) {
    case "family":
      return read.options.map((option) => classification.families.get(option.name) ?? 0)
    case "task_type": {
      const total = classification.families.get(question.family) ?? 0
      return read.options.map((option) => total > 0 ? (classification.taskTypes.get(option.name) ?? 0) / total : 1 / read.options.length)
    }
    case "difficulty":
      return read.options.map((option) => classification.levels[LEVEL_INDEX.get(option.name) ?? -1] ?? 0)
    case "facet": {
      const p = classification.facets[question.facet as keyof PromptClassification["facets"]] ?? 0.5
      return read.options.map((option) => (option.name === "yes" ? p : 1 - p))
    }
  }
}
