/**
 * A selection from a settled classification run, as a pure function of the run, the request and the loaded data:
 * the answers read back as a classification, the catalog ranked for it, and the wire response with the run's id,
 * usage and cost. The filters can still leave nothing here (a `max_latency_ms` too tight for the classified task's
 * expected answer), which is a `no_eligible_model` outcome stored and replayed like a selection.
 */
import type { SelectResponse } from "../../schema/RouterResponses.js"
import { runId, type RunRow } from "../runs/RunView.js"
import { readClassification } from "./ClassificationRun.js"
import { interpretClassification } from "./Classifier.js"
import { noEligibleModel } from "./Eligibility.js"
import { rank } from "./Ranking.js"
import type { RouterDataShape } from "./RouterData.js"
import type { SelectionRequest } from "./SelectRequest.js"

/** What a classified request comes to: a selection (stored with `replayed` false) or no eligible model. */
export type SelectionOutcome =
  | { readonly _tag: "Selected"; readonly selection: SelectResponse }
  | { readonly _tag: "NoEligibleModel"; readonly message: string }

/** The selection id of a classification run: `rtr_` + its hyphenated uuid (spec, Identifiers). */
export const selectionId = (runUuid: string): string => `rtr_${runUuid}`

/** Ranks the catalog for the classification stored in a completed run. */
export const decideSelection = (input: {
  readonly data: RouterDataShape
  readonly request: SelectionRequest
  readonly run: RunRow
  readonly decisionModel: string
}): SelectionOutcome => {
  const { data, request, run } = input
  const interpreted = interpretClassification(readClassification(run.output, request.fixed), data.taxonomy)
  const outcome = rank({
    catalog: data.catalog,
    taxonomy: data.taxonomy,
    taskDistribution: interpreted.taskDistribution,
    topTaskType: interpreted.topTaskType,
    difficulty: interpreted.difficulty,
    policy: request.policy,
    weights: request.weights,
    latency: request.latency,
    filters: request.filters,
    maxLatencyMs: request.maxLatencyMs,
    inputTokensEst: request.inputTokensEst,
    familyConfidence: interpreted.classification.task_type.fixed ? undefined : {
      family: interpreted.classification.domain.label,
      probability: interpreted.classification.domain.probabilities[interpreted.classification.domain.label] ?? 0
    },
    nonEnglish: interpreted.classification.facets.non_english
  })
  if (outcome._tag === "NoEligibleModel") {
    const detail = ` for the classified task (${interpreted.topTaskType}); its classification ${runId(run.id)} was billed`
    return { _tag: "NoEligibleModel", message: noEligibleModel(outcome.filtersApplied, detail).message }
  }
  const chosen = outcome.ranking[0]!
  return {
    _tag: "Selected",
    selection: {
      id: selectionId(run.id),
      run_id: runId(run.id),
      policy: request.policy,
      model: { id: chosen.id, name: chosen.name, provider: chosen.provider, open_weights: chosen.open_weights },
      classification: interpreted.classification,
      ranking: outcome.ranking,
      score_basis: "benchmarks",
      difficulty_floor: outcome.threshold?.tau ?? null,
      threshold: outcome.threshold,
      filters_applied: outcome.filtersApplied,
      low_confidence: outcome.lowConfidence,
      input_tokens_est: request.inputTokensEst,
      reason: outcome.reason,
      decision_model: input.decisionModel,
      catalog_as_of: data.catalog.file.as_of,
      benchmarks_as_of: data.catalog.file.benchmarks_as_of,
      usage: { input_tokens: run.input_tokens, output_tokens: run.output_tokens },
      cost_micros: run.cost_micros,
      replayed: false
    }
  }
}
