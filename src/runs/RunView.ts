/**
 * Runs as the API and other folders see them (decisions.md, Runs): `run_` + 32 hex ids (both spellings accepted on
 * the way in), the stored row with its answers, and the wire view: optional fields omitted when they have no value,
 * timestamps at second precision. Also the opaque cursors of the listings ordered newest first by (created_at, id):
 * the run list here and the usage ledger (src/usage/ imports them; this folder must not import that one).
 */
import { Option } from "effect"
import { createHash } from "node:crypto"
import { formatTimestamp } from "../../schema/Ids.js"
import type { Run, RunListPageSchema } from "../../schema/RunsApi.js"
import { uuidFromHex } from "../ids/Ids.js"
import type { RunRow } from "../ledger/RunRecord.js"

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
  if (compact !== null) return Option.some(uuidFromHex(compact[1]!))
  const hyphenated = Hyphenated.exec(lower)
  return hyphenated === null ? Option.none() : Option.some(hyphenated.slice(1).join("-"))
}

/** A run as the API returns it. */
export type RunView = typeof Run.Type

/** The status `POST /v1/runs` answers a run with: 202 for the replay of a run still pending, else 200. */
export const answerStatus = (view: RunView): 200 | 202 => view.state === "pending" ? 202 : 200

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

/** The largest page of the run list, and the page when no `limit` is sent (spec: clamped to 1-100, default 20). */
export const clampRunListLimit = (limit: number | undefined): number => Math.min(100, Math.max(1, limit ?? 20))

/**
 * A row's place in a listing ordered newest first by `(created_at, id)`: `at` is its `created_at` to the microsecond
 * (`YYYY-MM-DDTHH:MM:SS.ffffffZ`, as PostgreSQL stores it, so no two stored instants collapse) and `id` its id as text.
 */
export interface Keyset {
  readonly at: string
  readonly id: string
}

/** A listing whose pages carry cursors: its name (a cursor of one listing is refused by another) and its id format. */
export interface CursorListing {
  readonly name: string
  readonly id: RegExp
}

/** The run list: ids are uuids. */
export const RunListCursor: CursorListing = {
  name: "runs",
  id: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
}

/** SQL text of a `created_at` as a {@link Keyset}'s `at` (bind it back with `::timestamptz`). */
export const keysetAtSql = `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

const KeysetAt = /^(\d{4})-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/

/** Longest cursor read; anything longer is refused before it is decoded. */
const MaxCursorLength = 256

const checksum = (listing: CursorListing, organizationId: string, body: string): string =>
  createHash("sha256").update(`arbiter cursor v1\0${listing.name}\0${organizationId}\0${body}`).digest("base64url")
    .slice(0, 22)

/** The opaque cursor of a position in an organization's listing: base64url of the position, a dot, its checksum. */
export const encodeCursor = (listing: CursorListing, organizationId: string, key: Keyset): string => {
  const body = Buffer.from(`${key.at}|${key.id}`, "utf8").toString("base64url")
  return `${body}.${checksum(listing, organizationId, body)}`
}

const realInstant = (at: string): boolean => {
  const match = KeysetAt.exec(at)
  if (match === null || Number(match[1]) < 1) return false
  const date = new Date(`${at.slice(0, 23)}Z`)
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 23) === at.slice(0, 23)
}

/**
 * The position a cursor names, or none for anything this service did not issue for that listing and organization
 * (malformed, edited, truncated, or another listing's or organization's cursor).
 */
export const decodeCursor = (listing: CursorListing, organizationId: string, cursor: string): Option.Option<Keyset> => {
  if (cursor.length > MaxCursorLength) return Option.none()
  const parts = cursor.split(".")
  if (parts.length !== 2 || parts[1] !== checksum(listing, organizationId, parts[0]!)) return Option.none()
  const fields = Buffer.from(parts[0]!, "base64url").toString("utf8").split("|")
  if (fields.length !== 2) return Option.none()
  const [at, id] = fields as [string, string]
  return realInstant(at) && listing.id.test(id) ? Option.some({ at, id }) : Option.none()
}

/** A run of a run list page with its position (`keyset_at`: its `created_at` to the microsecond). */
export interface RunListEntry extends Pick<RunRow, "id" | "kind" | "state" | "input_digest" | "output_digest"> {
  readonly keyset_at: string
}

/** A page of the run list as the API returns it (`offset` is 0 on a page asked by cursor). */
export type RunListPageView = typeof RunListPageSchema.Type

/**
 * The wire page of up to `limit + 1` runs read newest first: the first `limit`, and the cursor of the last of them
 * when a further run was read (null on the last page).
 */
export const runListPageView = (
  organizationId: string,
  limit: number,
  offset: number,
  rows: ReadonlyArray<RunListEntry>
): RunListPageView => {
  const shown = rows.slice(0, limit)
  const last = shown[shown.length - 1]
  return {
    runs: shown.map((row) => ({
      run_id: runId(row.id),
      kind: row.kind,
      state: row.state,
      input_digest: row.input_digest,
      ...(row.output_digest === null ? {} : { output_digest: row.output_digest }),
      replayed: true as const
    })),
    limit,
    offset,
    next_cursor: rows.length > limit && last !== undefined
      ? encodeCursor(RunListCursor, organizationId, { at: last.keyset_at, id: last.id })
      : null
  }
}
