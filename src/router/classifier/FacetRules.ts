/**
 * The five facets the router asks about. The corpus labels none of them, so each is a written rule over the
 * task-type distribution (the type priors of `TypePriors.ts`, mixed by probability) and features of the prompt:
 * code asked for or shown (a video or podcast script is not code), the task's length (a logistic in log2
 * characters, even at 10,000 characters, about 2,500 tokens), language detection and "in <language>" requests, tool
 * schemas, web-search and "latest" words, and several steps or questions. Every facet stays within [0.02, 0.98]: a
 * rule is never certain.
 */
import { typePrior } from "./TypePriors.js"
import type { PromptFeatures } from "./TextFeatures.js"

/** The facet probabilities, named as the router's facet questions. */
export interface FacetProbabilities {
  readonly needs_code_output: number
  readonly needs_long_context: number
  readonly multi_step: number
  readonly non_english: number
  readonly needs_tools: number
}

/** What the rules read besides the prompt's features. */
export interface FacetInputs {
  readonly taskTypes: ReadonlyArray<string>
  readonly probabilities: Float64Array
  readonly familyProbability: (family: string) => number
  readonly totalChars: number
}

/** Characters at which a task is even odds to need its long input read in full. */
export const LONG_CONTEXT_MIDPOINT_CHARS = 10_000

/** Slope of the length logistic per doubling: about 0.1 at 4,000 characters, 0.93 at 30,000. */
export const LONG_CONTEXT_SLOPE = 1.66

const CODE_REQUEST = /\b(write|create|generate|implement|code|give me|show me|build|make)\b[^.?!\n]{0,60}\b(function|script|program|class|query|command|code|regex|snippet|sql|one-liner|endpoint|app)\b/
/** A script to be performed (a video, podcast or play), which CODE_REQUEST's "script" must not take for code. */
const MEDIA_SCRIPT = /\b(video|youtube|podcast|tiktok|reel|radio|film|movie|play|skit|commercial|episode|show|sketch)\b[^.?!\n]{0,40}\bscripts?\b|\bscripts?\b[^.?!\n]{0,60}\b(video|youtube|podcast|tiktok|reel|radio|film|movie|play|skit|commercial|episode|show|sketch)\b/
const ANSWER_LANGUAGE = /\b(answer|reply|respond|write|explain|tell me)\b[^.?!\n]{0,40}\bin (french|spanish|german|italian|portuguese|chinese|japanese|korean|russian|arabic|hindi|dutch|turkish|polish|swedish|vietnamese|thai)\b/
const TOOLS_NEEDED = /\b(search (the web|online|for)|look (it )?up|browse|latest|current(ly)?|today'?s|right now|real-time|live (price|score|data)|run (this|the|my) (code|tests?|script)|call the api|send (an? )?(email|message))\b/
const STEPS = /\b(step by step|step-by-step|first\b.*\bthen|and then|after that|finally|plan)\b/

const clamp = (value: number): number => Math.min(0.98, Math.max(0.02, value))

const sigmoid = (value: number): number => 1 / (1 + Math.exp(-value))

const mixed = (inputs: FacetInputs, pick: (prior: ReturnType<typeof typePrior>) => number): number =>
  inputs.taskTypes.reduce((sum, type, k) => sum + inputs.probabilities[k]! * pick(typePrior(type)), 0)

/** The facets of a prompt. */
export const facetProbabilities = (features: PromptFeatures, inputs: FacetInputs): FacetProbabilities => {
  const structure = features.structure
  const lower = features.requestText
  const codeShown = structure.has("fence") || structure.has("codelines:some") || structure.has("codelines:most")
  const codeBase = mixed(inputs, (prior) => prior.codeOutput)
  const codeAsked = CODE_REQUEST.test(lower) && !MEDIA_SCRIPT.test(lower)
  const code = codeAsked ? Math.max(codeBase, 0.85) : codeShown ? codeBase : codeBase * 0.8
  const length = sigmoid(LONG_CONTEXT_SLOPE * (Math.log2(Math.max(1, inputs.totalChars)) - Math.log2(LONG_CONTEXT_MIDPOINT_CHARS)))
  const long = 1 - (1 - length) * (1 - 0.5 * inputs.familyProbability("long_context"))
  const stepsBase = mixed(inputs, (prior) => prior.multiStep)
  const stepCues = (STEPS.test(lower) ? 1 : 0) + (structure.has("list") ? 1 : 0) + (structure.has("asks:many") ? 1 : 0)
  const translation = inputs.taskTypes.reduce((sum, type, k) => sum + (type === "multilingual.translation" ? inputs.probabilities[k]! : 0), 0)
  const nonEnglish = Math.max(features.language.nonEnglish, 0.85 * translation, ANSWER_LANGUAGE.test(lower) ? 0.8 : 0)
  const toolsBase = mixed(inputs, (prior) => prior.tools)
  const tools = structure.has("toolschema") ? Math.max(toolsBase, 0.9) : TOOLS_NEEDED.test(lower) ? Math.max(toolsBase, 0.6) : toolsBase
  return {
    needs_code_output: clamp(code),
    needs_long_context: clamp(long),
    multi_step: clamp(1 - (1 - stepsBase) * Math.pow(0.75, stepCues)),
    non_english: clamp(nonEnglish),
    needs_tools: clamp(tools)
  }
}
