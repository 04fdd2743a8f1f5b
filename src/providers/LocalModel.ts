/**
 * The built-in `local` model: deterministic and offline. The router's own classification questions (recognized
 * exactly, `src/router/classifier/RouterQuestions.ts`) are answered by the embedded prompt classifier trained for
 * them (`src/router/classifier/`, weights in `data/router-classifier.json`). Every other question gets a lexical
 * scorer, good for development, offline use, tests and deterministic demos; it is not judgement: it matches words,
 * so it cannot follow negation, arithmetic, paraphrase or anything a real model would be asked to weigh.
 * How it reads: text is lower-cased (NFKC), split into letter/digit words, common English stop words dropped, and a
 * trailing plural "s"/"ies" folded. The evidence is the state's words plus the earlier answers' words. A `choice` or
 * `score` option scores sum over its name-and-description words of idf x ln(1 + count in evidence), divided by the
 * square root of its word count, with idf = ln(1 + options / options containing the word); probabilities are the
 * softmax at temperature 0.35, mixed 95/5 with a uniform prior so no option is ever impossible. A `noul` reads the
 * proposition's (its instructions') share of words found in the evidence, c, and P(yes) = sigmoid(6 (c - 0.25) +
 * 3 (c_true - c_false)) with c_true/c_false the same share for the criteria descriptions (0 when absent), mixed
 * with the same prior (propositions carry generic words, such as "customer" or "ask", that a state rarely repeats,
 * so a quarter of them found already leans yes). Usage is reported as if it were the letter readout: input tokens = ceil(UTF-8 bytes of the
 * letter prompt / 4), output tokens 1, request id `local_` + a hash of the read. `thinkTokens` is ignored (one call
 * per read): a lexical scorer has no thought to write, and billing a think call that changes nothing would be dishonest.
 */
import { Clock, Effect, Exit, Layer } from "effect"
import { DeadlineExceeded } from "../../schema/Errors.js"
import { routerAnswerer, shippedClassifier } from "../router/classifier/RouterAnswers.js"
import { canonicalJson, sha256Hex } from "../encoding/CanonicalJson.js"
import { utf8Bytes } from "../encoding/Utf8.js"
import { letterPromptBytes } from "./LetterReadout.js"
import { ModelProvider, ProviderFailure, type Read, type ReadOptions, type ReadOutcome } from "./ModelProvider.js"

/** The local model's ledger identity. */
export const LOCAL_IDENTITY = { provider: "local", modelId: "arbiter-local-1" } as const

const TEMPERATURE = 0.35
const NOUL_CENTER = 0.25
const PRIOR_WEIGHT = 0.05

const STOP_WORDS = new Set(
  ("a an and are as at be but by for from has have in is it its of on or that the this to was were will with " +
    "not no yes do does did so if than then there their they them these those what which who whom how why when " +
    "where all any can could should would may might must shall about into over under up down out i you he she we")
    .split(" ")
)

const fold = (word: string): string => {
  if (word.length > 4 && word.endsWith("ies")) return `${word.slice(0, -3)}y`
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1)
  return word
}

/** The words the local model compares: lower-cased, stop words dropped, plurals folded. */
export const words = (text: string): ReadonlyArray<string> =>
  (text.normalize("NFKC").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])
    .filter((word) => !STOP_WORDS.has(word))
    .map(fold)

const countWords = (text: string, into: Map<string, number> = new Map()): Map<string, number> => {
  for (const word of words(text)) into.set(word, (into.get(word) ?? 0) + 1)
  return into
}

const share = (text: string | null, evidence: ReadonlyMap<string, number>): number => {
  const unique = new Set(words(text ?? ""))
  if (unique.size === 0) return 0
  let found = 0
  for (const word of unique) if (evidence.has(word)) found++
  return found / unique.size
}

const withPrior = (probabilities: ReadonlyArray<number>): ReadonlyArray<number> =>
  probabilities.map((p) => (1 - PRIOR_WEIGHT) * p + PRIOR_WEIGHT / probabilities.length)

const optionProbabilities = (read: Read, evidence: ReadonlyMap<string, number>): ReadonlyArray<number> => {
  const terms = read.options.map((option) => new Set(words(`${option.name} ${option.description ?? ""}`)))
  const containing = new Map<string, number>()
  for (const set of terms) for (const word of set) containing.set(word, (containing.get(word) ?? 0) + 1)
  const scores = terms.map((set) => {
    if (set.size === 0) return 0
    let sum = 0
    for (const word of set) {
      sum += Math.log(1 + read.options.length / containing.get(word)!) * Math.log(1 + (evidence.get(word) ?? 0))
    }
    return sum / Math.sqrt(set.size)
  })
  const top = Math.max(...scores)
  const weights = scores.map((score) => Math.exp((score - top) / TEMPERATURE))
  const total = weights.reduce((sum, w) => sum + w, 0)
  return withPrior(weights.map((w) => w / total))
}

const noulProbabilities = (read: Read, evidence: ReadonlyMap<string, number>): ReadonlyArray<number> => {
  const description = (name: string) => read.options.find((option) => option.name === name)?.description ?? null
  const proposition = words(read.instructions).length === 0 ? 0.5 : share(read.instructions, evidence)
  const logit = 6 * (proposition - NOUL_CENTER) + 3 * (share(description("yes"), evidence) - share(description("no"), evidence))
  const yes = 1 / (1 + Math.exp(-logit))
  return withPrior(read.options.map((option) => (option.name === "yes" ? yes : 1 - yes)))
}

const lexicalProbabilities = (read: Read, state: StateCache): ReadonlyArray<number> => {
  const evidence = new Map(state.words)
  for (const earlier of read.context) countWords(earlier.answer, evidence)
  return read.type === "noul" ? noulProbabilities(read, evidence) : optionProbabilities(read, evidence)
}

interface StateCache {
  state: string
  bytes: number
  digest: string
  words: ReadonlyMap<string, number>
}

/**
 * Builds the local model; it keeps the last state's words so the draws and questions of one run tokenize it once.
 * The classifier's weights are read here (once per process), so a missing or damaged weights file stops the start.
 */
const make = Effect.sync(() => {
  const router = routerAnswerer(shippedClassifier())
  let cache: StateCache | null = null
  const stateOf = (state: string): StateCache => {
    if (cache === null || cache.state !== state) {
      cache = { state, bytes: utf8Bytes(state), digest: sha256Hex(state), words: countWords(state) }
    }
    return cache
  }
  const answer = (read: Read, at: Date): ReadOutcome => {
    const state = stateOf(read.state)
    const probabilities = router(read) ?? lexicalProbabilities(read, state)
    const { state: _state, thinkTokens: _think, ...rest } = read
    const id = sha256Hex(canonicalJson({ ...rest, state: state.digest })).slice(0, 32)
    return {
      probabilities,
      calls: [{
        retryOrdinal: 0,
        status: "succeeded",
        inputTokens: Math.ceil(letterPromptBytes(read, state.bytes).answer / 4),
        outputTokens: 1,
        providerRequestId: `local_${id}`,
        at,
        purpose: "answer"
      }]
    }
  }
  /** A read at `now`: answered at once, or refused once the deadline passed. */
  const readAt = (read: Read, options: ReadOptions, now: number): Exit.Exit<ReadOutcome, ProviderFailure> =>
    now >= options.deadline
      ? Exit.fail(new ProviderFailure({
        error: new DeadlineExceeded({ message: "the run's deadline passed before the model was asked" }),
        calls: []
      }))
      : Exit.succeed(answer(read, new Date(now)))
  return ModelProvider.of({
    identity: LOCAL_IDENTITY,
    read: (read, options) => Effect.flatMap(Clock.currentTimeMillis, (now) => readAt(read, options, now))
  })
})

/** The local model: `LocalModel.layer` provides `ModelProvider` with no network. */
export const LocalModel = { layer: Layer.effect(ModelProvider, make) as Layer.Layer<ModelProvider> }
