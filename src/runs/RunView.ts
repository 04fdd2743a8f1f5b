/**
 * Runs as the API and other folders see them (decisions.md, Runs): `run_` + 32 hex ids (both spellings accepted on
 * the way in), the stored row with its answers, and the wire view: optional fields omitted when they have no value,
 * timestamps at second precision.
 */
import { Option } from "effect"
import { formatTimestamp } from "../../schema/Ids.js"
import { uuidFromHex } from "../ids/Ids.js"
import type { RunRow } from "../ledger/RunRecord.js"
import type { Answer } from "./Answers.js"

export type { Answer } from "./Answers.js"
export type { RunRow } from "../ledger/RunRecord.js"

const Compact = /^run_([0-9a-f]{32})$/
const Hyphenated = /^run_([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})$/

/** `run_` + 32 hex of a uuid. */
export const runId = (uuid: string): string => `run_${uuid.replace(/-/g, "")}`

/** `run_` + the hyphenated uuid (the usage routes' spelling). */
export const hyphenatedRunId = (uuid: string): string => `run_${uuid}`

/** The uuid of a run id in either spelling; none for anything else. */
export const parseRunId = (value: string): Option.Option<string> => {
  const lower = value.toLowerCase() === value ? value : ""
  const compact = Compact.exec(lower)
  if (compact !== null) {
    return Option.some(uuidFromHex(compact[1]!))
  }
  const hyphenated = Hyphenated.exec(lower)
  return hyphenated === null ? Option.none() : Option.some(hyphenated.slice(1).join("-"))
}

/** A run as the API returns it. */
export interface RunView {
  readonly run_id: string
  readonly kind: "decision" | "verdict"
  readonly state: "pending" | "completed" | "failed"
  readonly input_digest: string
  readonly output_digest?: string
  readonly replayed: boolean
  readonly decision?: {
    readonly model: string
    readonly answers: Readonly<Record<string, Answer | null>>
    readonly skipped?: Readonly<Record<string, unknown>>
  }
  readonly usage?: { readonly input_tokens: number; readonly output_tokens: number }
  readonly cost_micros?: number
  readonly created_at: string
  readonly settled_at?: string
  readonly error?: { readonly code: string; readonly message: string }
}

/** The wire view of a stored run. */
export const runView = (row: RunRow, replayed: boolean): RunView => {
  const output = row.output as { decision?: RunView["decision"] } | null
  const settled = row.state !== "pending"
  return {
    run_id: runId(row.id),
    kind: row.kind,
    state: row.state,
    input_digest: row.input_digest,
    ...(row.output_digest === null ? {} : { output_digest: row.output_digest }),
    replayed,
    ...(output?.decision === undefined ? {} : { decision: output.decision }),
    ...(settled ? { usage: { input_tokens: row.input_tokens, output_tokens: row.output_tokens } } : {}),
    ...(settled ? { cost_micros: row.cost_micros } : {}),
    created_at: formatTimestamp(row.created_at),
    ...(row.settled_at === null ? {} : { settled_at: formatTimestamp(row.settled_at) }),
    ...(row.error_code === null ? {} : { error: { code: row.error_code, message: row.error_message ?? "" } })
  }
}
