/**
 * The rows the ledger writes and reads back: a stored run (`runs`) and a model call (`ledger_entries`). The runs
 * feature reads them for its routes; the ledger is the only code that writes them.
 */

/** Where a run came from: `POST /v1/runs`, or a router selection's classification. */
export type RunOrigin = "runs" | "router"

export interface RunRow {
  readonly id: string
  readonly organization_id: string
  readonly origin: RunOrigin
  readonly idempotency_key: string
  readonly kind: "decision" | "verdict"
  readonly state: "pending" | "completed" | "failed"
  readonly input_digest: string
  readonly output_digest: string | null
  readonly output: unknown
  readonly error_code: string | null
  readonly error_message: string | null
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cost_micros: number
  readonly hold_micros: number
  readonly hold_tokens: number
  readonly created_at: Date
  readonly settled_at: Date | null
}

/** The columns of a `RunRow`, as SQL selects them. */
export const runColumns = `id::text, organization_id, origin, idempotency_key, kind, state, input_digest, output_digest,
  output, error_code, error_message, input_tokens, output_tokens, cost_micros, hold_micros, hold_tokens, created_at,
  settled_at`

/** A run's row as JSON text gives it back (`row_to_json`, or a JSON aggregate): timestamps as strings. */
export const runRowOfJson = (json: Record<string, any>): RunRow => ({
  ...(json as unknown as RunRow),
  id: String(json.id),
  created_at: new Date(json.created_at),
  settled_at: json.settled_at === null ? null : new Date(json.settled_at)
})

/** One model call as the ledger records it. */
export interface LedgerCall {
  readonly runId: string
  /** The call's place among its run's calls (0, 1, ...); a call is stored once per run and index. */
  readonly callIndex: number
  readonly retryOrdinal: number
  readonly provider: string
  readonly modelId: string
  readonly providerRequestId: string | null
  readonly status: "succeeded" | "failed"
  readonly inputTokens: number
  readonly outputTokens: number
  readonly costMicros: number
  readonly createdAt: Date
}

/** Calls as `json_to_recordset` rows of the ledger's statements. */
export const ledgerRows = (calls: ReadonlyArray<LedgerCall>) =>
  calls.map((call) => ({
    run_id: call.runId,
    call_index: call.callIndex,
    retry_ordinal: call.retryOrdinal,
    provider: call.provider,
    model_id: call.modelId,
    provider_request_id: call.providerRequestId,
    status: call.status,
    input_tokens: call.inputTokens,
    output_tokens: call.outputTokens,
    cost_micros: call.costMicros,
    created_at: call.createdAt.toISOString()
  }))
