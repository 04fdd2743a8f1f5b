/**
 * A decision run's spend ceiling, kept while its reads run (decisions.md, budget_exhausted). Before a read, its
 * worst case is priced and held: with no thought, one letter call of the estimated prompt and 1 output token; with
 * a thought of up to T tokens, a think call (estimated prompt, T out) plus a letter call carrying the thought
 * (estimated prompt + follow-up + T in, 1 out), each priced like a real call. Estimates are ceil(UTF-8 bytes / 4),
 * scaled up by the largest actual/estimated input ratio seen so far in the run when that is above 1. The read is
 * made only if spent + held + its worst case stays within the ceiling; each call is priced as it ends, its cost
 * taking the place of as much of its read's hold, and the rest of the hold is released when the read ends. Failed
 * attempts cost nothing, so retries never add to the worst case.
 */
import type { ModelCall } from "../providers/ModelProvider.js"
import { callCostMicros } from "./RunLimits.js"

/** Estimated input tokens of a read's prompts (see LetterReadout.letterPromptBytes). */
export interface ReadEstimate {
  readonly answer: number
  readonly think: number
  readonly followUp: number
}

/** A call priced as it ended. */
export type CostedCall = ModelCall & { readonly costMicros: number }

/** The spend state of one run. */
export interface RunBudget {
  /** The priced worst case of a read with this estimate and thought length. */
  readonly worstCase: (estimate: ReadEstimate, thinkTokens: number) => number
  /** Holds `worst` if it fits beside what is spent and held; false (holding nothing) when it would pass the ceiling. */
  readonly hold: (worst: number) => boolean
  /**
   * Prices one call as it ends: adds its cost to the spend, in place of as much of its read's hold (what is still
   * held for the read: its worst case, less the cost of its calls priced so far).
   */
  readonly price: (hold: { remaining: number }, call: ModelCall) => CostedCall
  /** Releases what remains of a read's hold once it ended and learns the estimate ratio from its calls. */
  readonly release: (hold: { remaining: number }, estimate: ReadEstimate, calls: ReadonlyArray<ModelCall>) => void
  /** What is spent and held now, for messages. */
  readonly snapshot: () => { readonly spent: number; readonly held: number; readonly ceiling: number }
}

export const makeRunBudget = (ceilingMicros: number, pricePerMtokMicros: number): RunBudget => {
  let spent = 0
  let held = 0
  let ratio = 1
  const scale = (tokens: number) => Math.ceil(tokens * ratio)
  const cost = (input: number, output: number) => callCostMicros(input, output, pricePerMtokMicros)

  return {
    worstCase: (estimate, thinkTokens) =>
      thinkTokens === 0
        ? cost(scale(estimate.answer), 1)
        : cost(scale(estimate.think), thinkTokens) + cost(scale(estimate.think + estimate.followUp) + thinkTokens, 1),
    hold: (worst) => {
      if (spent + held + worst > ceilingMicros) return false
      held += worst
      return true
    },
    price: (hold, call) => {
      const costMicros = cost(call.inputTokens, call.outputTokens)
      const covered = Math.min(costMicros, hold.remaining)
      spent += costMicros
      held -= covered
      hold.remaining -= covered
      return { ...call, costMicros }
    },
    release: (hold, estimate, calls) => {
      held -= hold.remaining
      hold.remaining = 0
      let thought: number | null = null
      for (const call of calls) {
        if (call.status !== "succeeded") continue
        const expected = call.purpose === "think"
          ? estimate.think
          : thought !== null
          ? estimate.think + estimate.followUp + thought
          : estimate.answer
        if (call.purpose === "think") thought = call.outputTokens
        if (expected > 0) ratio = Math.max(ratio, call.inputTokens / expected)
      }
    },
    snapshot: () => ({ spent, held, ceiling: ceilingMicros })
  }
}
