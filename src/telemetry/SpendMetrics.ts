/**
 * Tokens and spend, counted once per run when its settlement commits (the ledger's settlement queue calls
 * `countSettledRun` as it finishes a run it stored): the tokens and cost of each of the run's calls, by the call's
 * model and the run's stored state as `outcome` (`completed`, `failed`, `pending`). Never by organization or key:
 * a label per customer would make a series per customer. A run whose settlement PostgreSQL refused outright is not
 * billed and not counted. The figures are this process's settlements; the ledger stays the source of truth for money.
 */
import { labels, LabelSets, record, spendMicroUsd, upstreamTokens } from "./Metrics.js"

/** A settled call as this module reads it (the ledger's `LedgerCall`). */
export interface SettledCall {
  readonly modelId: string
  readonly inputTokens: number
  readonly outputTokens: number
  readonly costMicros: number
}

/** The words of a key before its last part, and the rest (a model id may hold spaces). */
const splitKey = (key: string, words: number): Array<string> => {
  const parts: Array<string> = []
  let rest = key
  for (let i = 0; i < words; i++) {
    const space = rest.indexOf(" ")
    parts.push(rest.slice(0, space))
    rest = rest.slice(space + 1)
  }
  return [...parts, rest]
}

const tokenSeries = new LabelSets((key) => {
  const [kind, outcome, model] = splitKey(key, 2) as [string, string, string]
  return labels({ model, kind, outcome })
})

const spendSeries = new LabelSets((key) => {
  const [outcome, model] = splitKey(key, 1) as [string, string]
  return labels({ model, outcome })
})

/** Counts the tokens and cost of a settled run's calls, by model and the run's stored state. */
export const countSettledRun = (state: string, calls: ReadonlyArray<SettledCall>): void => {
  for (const call of calls) {
    if (call.inputTokens > 0) record(upstreamTokens, call.inputTokens, tokenSeries.get(`input ${state} ${call.modelId}`))
    if (call.outputTokens > 0) record(upstreamTokens, call.outputTokens, tokenSeries.get(`output ${state} ${call.modelId}`))
    if (call.costMicros > 0) record(spendMicroUsd, call.costMicros, spendSeries.get(`${state} ${call.modelId}`))
  }
}
