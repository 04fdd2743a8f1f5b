/** The decision engine as its tests run it: over the `ModelProvider` of the context (a test layer or the fake upstream). */
import { Effect } from "effect"
import { ModelProvider } from "../../src/providers/ModelProvider.js"
import type { DecisionPlan } from "../../src/runs/DecisionPlan.js"
import { type DecisionOptions, type EngineResult, executeDecision as executeWith } from "../../src/runs/DecisionEngine.js"

/** `executeDecision` over the provider in the context. */
export const executeDecision = (
  plan: DecisionPlan,
  options: DecisionOptions
): Effect.Effect<EngineResult, never, ModelProvider> =>
  Effect.flatMap(ModelProvider, (provider) => executeWith(provider, plan, options))
