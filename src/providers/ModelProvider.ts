/**
 * The model provider service: one `read` answers one draw of one question as probabilities over its options,
 * with every upstream attempt it made (retries included) as ledger-ready `ModelCall`s, whether it succeeded or
 * failed. A call "occurred" (is billed) exactly when its status is `succeeded`.
 */
import { Context, Data, type Effect } from "effect"
import type {
  DeadlineExceeded,
  DecisionUnavailable,
  InputTooLarge,
  ProviderBadResponse,
  ProviderRateLimited,
  ProviderUnavailable
} from "../../schema/Errors.js"

/** The three question types of a decision. */
export type QuestionType = "noul" | "choice" | "score"

/** One alternative of a question: a `noul`'s yes/no, a `choice`'s option, a `score`'s level. */
export interface QuestionOption {
  readonly name: string
  readonly description: string | null
}

/** An earlier answer carried into a read: the question id, its instructions and its answer as text. */
export interface ReadContext {
  readonly question: string
  readonly instructions: string
  readonly answer: string
}

/** One draw of one question, as the model is to read it. */
export interface Read {
  /** The rendered state or messages. */
  readonly state: string
  /** Earlier answers this question depends on; empty when the question is `alone`. */
  readonly context: ReadonlyArray<ReadContext>
  readonly instructions: string
  readonly type: QuestionType
  /** The options in this draw's order (a `noul` lists yes and no). */
  readonly options: ReadonlyArray<QuestionOption>
  /** Most tokens of a thought before the letter; 0 reads the letter directly. */
  readonly thinkTokens: number
}

/** One upstream attempt, which is one ledger entry; failed attempts carry 0 tokens. */
export interface ModelCall {
  /** 0 for the first attempt of a call, + 1 for each retry of it. */
  readonly retryOrdinal: number
  readonly status: "succeeded" | "failed"
  readonly inputTokens: number
  readonly outputTokens: number
  readonly providerRequestId: string | null
  /** When the attempt ended. */
  readonly at: Date
  readonly purpose: "think" | "answer"
}

/** A successful read: a probability per option in the read's order (summing to 1) and its attempts. */
export interface ReadOutcome {
  readonly probabilities: ReadonlyArray<number>
  readonly calls: ReadonlyArray<ModelCall>
}

/** The error a read ends with, by its wire code. */
export type ProviderError =
  | ProviderRateLimited
  | ProviderUnavailable
  | ProviderBadResponse
  | DecisionUnavailable
  | DeadlineExceeded
  | InputTooLarge

/** A failed read: its error and every attempt it made before failing (some may have succeeded and be billed). */
export class ProviderFailure extends Data.TaggedError("ProviderFailure")<{
  readonly error: ProviderError
  readonly calls: ReadonlyArray<ModelCall>
}> {}

/** How a read is made: its deadline and who hears of each attempt as it ends. */
export interface ReadOptions {
  readonly deadline: number
  readonly onCall?: ((call: ModelCall) => void) | undefined
}

/** Who answers: the provider kind ("local" or "openai") and the upstream model name, for the ledger. */
export interface ProviderIdentity {
  readonly provider: string
  readonly modelId: string
}

/** The model that answers decision questions. */
export class ModelProvider extends Context.Service<ModelProvider, {
  readonly identity: ProviderIdentity
  /**
   * Reads one draw of one question before `deadline` (epoch ms), reporting every attempt made; `onCall`, when given,
   * is told of each attempt as it ends (a provider may leave that to the outcome when it answers at once).
   */
  readonly read: (read: Read, options: ReadOptions) => Effect.Effect<ReadOutcome, ProviderFailure>
}>()("ModelProvider") {}
