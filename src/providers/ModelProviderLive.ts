/** The model provider chosen by `DECISION_PROVIDER`: the built-in `local` model, or an OpenAI-compatible server. */
import { Effect, Layer, Option } from "effect"
import { AppConfig } from "../config/AppConfig.js"
import { LocalModel } from "./LocalModel.js"
import { OpenAiCompatible } from "./OpenAiCompatible.js"

export const ModelProviderLive = Layer.unwrap(
  Effect.map(AppConfig, (config) =>
    config.decisionProvider === "openai"
      ? OpenAiCompatible.layer({
        baseUrl: Option.getOrThrow(config.decisionProviderUrl),
        apiKey: Option.getOrUndefined(config.decisionProviderApiKey),
        model: Option.getOrThrow(config.decisionProviderModel),
        maxRetries: config.decisionProviderMaxRetries,
        retryBaseDelayMs: config.decisionProviderRetryBaseMs,
        attemptTimeoutMs: config.decisionProviderAttemptTimeoutMs
      })
      : LocalModel.layer)
)
