/**
 * What the training and evaluation commands read and where: the corpus folder (default
 * `../shared/data/router-train` beside the project), the shipped seeds and taxonomy, where the corpus's licence
 * texts are copied, and the `--name value` arguments of the command line.
 */
import { statSync } from "node:fs"
import { join, resolve } from "node:path"
import { projectRoot, shippedFile } from "../../src/config/ProjectRoot.js"

/** The corpus folder used when `--corpus` is not given. */
export const DEFAULT_CORPUS = resolve(projectRoot, "..", "shared", "data", "router-train")

/** The hand-written seed prompts, trained on with the corpus. */
export const SEEDS_PATH = shippedFile("data", "router-classifier-seeds.jsonl")

/** Conversational prompts written for this project (sources `written_chat`, `written_chat_2`, ...), each trained on as a corpus source. */
export const WRITTEN_PATH = shippedFile("data", "router-classifier-written.jsonl")

/** Held-out prompts written for this project in the style of real users' requests (English and Japanese), never trained on. */
export const HOLDOUT_PATH = shippedFile("data", "router-classifier-holdout.jsonl")

/** A second held-out set, written before the last rounds of changes and never used to judge them. */
export const HOLDOUT_2_PATH = shippedFile("data", "router-classifier-holdout-2.jsonl")

/** A third held-out set, written after the last change to the training data and read once, to estimate. */
export const HOLDOUT_3_PATH = shippedFile("data", "router-classifier-holdout-3.jsonl")

/**
 * A fourth held-out set, real-user style (longer requests, code mixed with prose, eight languages), written before the
 * second batch of written prompts and classified before it; its misses were seen while that batch was written.
 */
export const HOLDOUT_4_PATH = shippedFile("data", "router-classifier-holdout-4.jsonl")

/**
 * A fifth held-out set, written with the fourth, before the second batch of written prompts; classified before that
 * batch and once after it, blind; its misses were read then and guided the third batch, so it flatters the classifier.
 */
export const HOLDOUT_5_PATH = shippedFile("data", "router-classifier-holdout-5.jsonl")

/**
 * A sixth held-out set, written before the third batch of written prompts; classified before and after it without
 * reading its misses, which were then read and guided the last changes to the intent classes and language words.
 */
export const HOLDOUT_6_PATH = shippedFile("data", "router-classifier-holdout-6.jsonl")

/**
 * A seventh held-out set, written after the third batch and before the last changes to the intent classes, classified
 * once before and once after them; its misses are never read: the estimate of accuracy on real users' prompts.
 */
export const HOLDOUT_7_PATH = shippedFile("data", "router-classifier-holdout-7.jsonl")

/**
 * An eighth held-out set, written before the fourth batch of written prompts and classified with the weights before
 * and after it; its misses are never read: with the seventh, the estimate of accuracy on real users' prompts.
 */
export const HOLDOUT_8_PATH = shippedFile("data", "router-classifier-holdout-8.jsonl")

/**
 * A ninth held-out set, written before the changes it was to judge; its misses are never read: with the seventh and
 * eighth, the estimate of accuracy on real users' prompts.
 */
export const HOLDOUT_9_PATH = shippedFile("data", "router-classifier-holdout-9.jsonl")

/** The hand-written sanity prompts, never trained on. */
export const SANITY_PATH = shippedFile("data", "router-classifier-sanity.jsonl")

/** Every hand-written set the evaluation classifies and the training never reads (`WrittenOverlap.ts` keeps them apart). */
export const EVALUATION_PATHS: ReadonlyArray<string> = [
  HOLDOUT_PATH,
  HOLDOUT_2_PATH,
  HOLDOUT_3_PATH,
  HOLDOUT_4_PATH,
  HOLDOUT_5_PATH,
  HOLDOUT_6_PATH,
  HOLDOUT_7_PATH,
  HOLDOUT_8_PATH,
  HOLDOUT_9_PATH,
  SANITY_PATH
]

/** The taxonomy whose labels the classifier predicts. */
export const TAXONOMY_PATH = shippedFile("data", "task-types.json")

/** Where the corpus's licence texts are copied. */
export const LICENCES_DIR = shippedFile("data", "router-train-LICENSES")

/** The value of `--name value` among the arguments, or the default. */
export const argument = (args: ReadonlyArray<string>, name: string, fallback: string): string => {
  const at = args.indexOf(`--${name}`)
  return at >= 0 && args[at + 1] !== undefined ? args[at + 1]! : fallback
}

/** The corpus's `prompts.jsonl`, given its folder or the file itself. */
export const corpusFile = (path: string): string => (statSync(path).isDirectory() ? join(path, "prompts.jsonl") : path)
