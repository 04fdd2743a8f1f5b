/**
 * The OpenAI-compatible provider pointed at the FakeUpstream of the enclosing layer, with fast retries, for tests
 * that go through the real transport.
 */
import { Clock, Effect } from "effect"
import { ModelProvider } from "../../src/providers/ModelProvider.js"
import type { Read, ReadOutcome, ProviderFailure } from "../../src/providers/ModelProvider.js"
import { OpenAiCompatible } from "../../src/providers/OpenAiCompatible.js"
import type { OpenAiCompatibleConfig } from "../../src/providers/OpenAiCompatible.js"
import { FakeUpstream } from "./FakeUpstream.js"

/** A three-option choice read, the provider tests' common input. */
export const choiceRead: Read = {
  state: "order 1182: refund requested for a damaged lamp",
  context: [],
  instructions: "Which team handles it?",
  type: "choice",
  options: [
    { name: "billing", description: null },
    { name: "support", description: null },
    { name: "sales", description: null }
  ],
  thinkTokens: 0
}

/** Overrides of the test provider's settings (model "judge-7b", no key, 3 retries 5 ms apart by default). */
export type UpstreamProviderConfig = Partial<OpenAiCompatibleConfig>

/** Provides `ModelProvider` as the OpenAI-compatible provider talking to the fake upstream. */
export const withUpstreamProvider = (config: UpstreamProviderConfig = {}) =>
<A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.provideServiceEffect(
      ModelProvider,
      Effect.flatMap(FakeUpstream, (upstream) =>
        OpenAiCompatible.make({
          baseUrl: upstream.url,
          apiKey: undefined,
          model: "judge-7b",
          retryBaseDelayMs: 5,
          maxRetries: 3,
          ...config
        }))
    ),
    Effect.scoped
  )

/** One read through the provider's `read`, due `deadlineInMs` (default 10 s) from now. */
export const readThroughUpstream = (
  read: Read,
  config: UpstreamProviderConfig & { readonly deadlineInMs?: number } = {}
): Effect.Effect<ReadOutcome, ProviderFailure, FakeUpstream> => {
  const { deadlineInMs, ...settings } = config
  return Effect.gen(function*() {
    const deadline = (yield* Clock.currentTimeMillis) + (deadlineInMs ?? 10_000)
    const provider = yield* ModelProvider
    return yield* provider.read(read, { deadline })
  }).pipe(withUpstreamProvider(settings))
}
