/**
 * A model's estimated cost and time to the full answer for a task (decisions.md, Precise rules and Router
 * scoring). The reasoning_token_factor f is total output over answer tokens, so the model generates `O * f` tokens;
 * `ttft_ms` already includes thinking time, so reasoning tokens are not added to the latency again.
 */
import type { CatalogModel } from "./Catalog.js"

/** The expected answer tokens `O` and turns `T` of a task. */
export interface TaskVolume {
  readonly outputTokens: number
  readonly turns: number
}

/** `T * (input_tokens_est * price_in + O * f * price_out) / 1e6`, in USD. */
export const estimateCostUsd = (model: CatalogModel, volume: TaskVolume, inputTokensEst: number): number =>
  (volume.turns *
    (inputTokensEst * model.entry.price_input_per_mtok +
      volume.outputTokens * model.reasoningFactor * model.entry.price_output_per_mtok)) /
  1e6

/** `ttft_ms + O / output_tokens_per_s * 1000`, catalog medians standing in for missing figures. */
export const estimateLatencyMs = (model: CatalogModel, outputTokens: number): number =>
  model.ttftMs + (outputTokens / model.outputTokensPerS) * 1000
