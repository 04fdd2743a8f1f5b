/**
 * The classifier as the local model uses it: the shipped weights, loaded once per process (every local model
 * built shares them), and an answerer that recognizes the router's questions and answers them from one
 * classification per state. The ~15 reads of one selection share the same state, so a small cache of the latest
 * states (CACHED_STATES, oldest dropped first) classifies each prompt once even when selections interleave.
 */
import type { ClassifierModel } from "./ClassifierModel.js"
import { classifyState, type PromptClassification } from "./PromptClassifier.js"
import { answerRouterQuestion, type AskedQuestion, routerQuestionIndex } from "./RouterQuestions.js"
import { DEFAULT_WEIGHTS_PATH, readWeights } from "./WeightsFile.js"

/** States whose classification is kept. */
export const CACHED_STATES = 32

let shipped: ClassifierModel | null = null

/** The shipped classifier (`data/router-classifier.json`), read on first use and kept. */
export const shippedClassifier = (): ClassifierModel => {
  shipped ??= readWeights(DEFAULT_WEIGHTS_PATH)
  return shipped
}

/** Answers a read from the classifier when it is one of the router's questions, else null. */
export type RouterAnswerer = (read: AskedQuestion) => ReadonlyArray<number> | null

/** An answerer over a model, with its own cache of classified states. */
export const routerAnswerer = (model: ClassifierModel): RouterAnswerer => {
  const recognize = routerQuestionIndex(model.labels)
  const cache = new Map<string, PromptClassification>()
  const classified = (state: string): PromptClassification => {
    const known = cache.get(state)
    if (known !== undefined) return known
    const classification = classifyState(model, state)
    if (cache.size >= CACHED_STATES) cache.delete(cache.keys().next().value!)
    cache.set(state, classification)
    return classification
  }
  return (read) => {
    const question = recognize(read)
    return question === null ? null : answerRouterQuestion(question, read, classified(read.state))
  }
}
