/**
 * What a run's end is stored as (RunExecution.ts does the run): the end of a run the decision engine finished or
 * stopped, its model calls as ledger entries, the failure stored when the caller was told its deadline passed, and the
 * stored run as settlement left it, for the caller.
 */
import { DeadlineExceeded } from "../../schema/Errors.js"
import { canonicalDigest } from "../encoding/CanonicalJson.js"
import type { AdmittedRun } from "../ledger/RunLedger.js"
import type { LedgerCall, RunRow } from "../ledger/RunRecord.js"
import type { RunEnd } from "../ledger/Settlement.js"
import type { ModelProvider } from "../providers/ModelProvider.js"
import { callOccurred, type EngineError, type EngineResult, type IndexedCall } from "./DecisionEngine.js"
import { SPEND_CEILING_MICROS } from "./RunLimits.js"
import type { RunSpec } from "./RunSpec.js"

/** The model that answers a run's reads, as its calls are recorded. */
export interface AnsweringModel {
  readonly provider: ModelProvider["Service"]
  readonly modelId: string
}

const DeadlineMessage = "the run's deadline passed before it settled"

/** The failure a caller is told when the run's deadline passes before it settled. */
export const deadlineError = () => new DeadlineExceeded({ message: DeadlineMessage })

/**
 * The failure stored for a run whose caller was answered 504: failed with its answered calls, or still pending.
 * Built from constants (no error object), as every settlement prepares it.
 */
export const deadlineEnd = (calls: ReadonlyArray<LedgerCall>): RunEnd => {
  const answered = calls.some((call) => call.status === "succeeded")
  return {
    state: answered ? "failed" : "pending",
    output: null,
    outputDigest: null,
    errorCode: answered ? DeadlineExceeded._tag : null,
    errorMessage: answered ? DeadlineMessage : null,
    calls
  }
}

/** A run's model calls as ledger entries. */
export const ledgerCalls = (context: AnsweringModel, runId: string, calls: ReadonlyArray<IndexedCall>): Array<LedgerCall> =>
  calls.map((call) => ({
    runId,
    callIndex: call.index,
    retryOrdinal: call.retryOrdinal,
    provider: context.provider.identity.provider,
    modelId: context.modelId,
    providerRequestId: call.providerRequestId,
    status: call.status,
    inputTokens: call.inputTokens,
    outputTokens: call.outputTokens,
    costMicros: call.costMicros,
    createdAt: call.at
  }))

/** The end of a run the engine finished (or stopped). */
export const engineEnd = (context: AnsweringModel, runId: string, result: EngineResult): { end: RunEnd; error: EngineError | null } => {
  const calls = ledgerCalls(context, runId, result.calls)
  if (result.error === null) {
    const skipped = Object.keys(result.skipped).length === 0 ? {} : { skipped: result.skipped }
    const output = { decision: { model: context.modelId, answers: result.answers, ...skipped } }
    return {
      end: { state: "completed", output, outputDigest: canonicalDigest(output), errorCode: null, errorMessage: null, calls },
      error: null
    }
  }
  const state = callOccurred(result) ? "failed" : "pending"
  const stored = state === "failed" ? result.error : null
  return {
    end: { state, output: null, outputDigest: null, errorCode: stored?._tag ?? null, errorMessage: stored?.message ?? null, calls },
    error: result.error
  }
}

/** The stored run as settlement left it, for the caller (what a `GET` of it would show). */
export const settledRow = (run: AdmittedRun, spec: RunSpec, end: RunEnd, settledAt: Date): RunRow => ({
  id: run.pending.id,
  organization_id: run.pending.organizationId,
  origin: run.pending.origin,
  idempotency_key: run.pending.idempotencyKey,
  kind: spec.kind,
  input_digest: spec.inputDigest,
  hold_micros: SPEND_CEILING_MICROS,
  hold_tokens: spec.holdTokens,
  created_at: run.pending.createdAt,
  state: end.state,
  output_digest: end.outputDigest,
  output: end.output,
  error_code: end.errorCode,
  error_message: end.errorMessage,
  input_tokens: end.calls.reduce((sum, call) => sum + call.inputTokens, 0),
  output_tokens: end.calls.reduce((sum, call) => sum + call.outputTokens, 0),
  cost_micros: end.calls.reduce((sum, call) => sum + call.costMicros, 0),
  settled_at: end.state === "pending" ? null : settledAt
})
