/** Calls of the usage routes for tests: a GET expecting 200, run ids in the usage routes' spelling, window queries. */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { formatTimestamp } from "../../schema/Ids.js"
import { call } from "./Api.js"

/** GET with a credential, asserting 200; the parsed body. */
export const getJson = (path: string, secret: string) =>
  Effect.map(call("GET", path, { secret }), (response) => {
    assert.strictEqual(response.status, 200, `${path}: ${response.text}`)
    return response.json()
  })

/** `run_` + 32 hex as `run_` + the hyphenated uuid. */
export const hyphenated = (runId: string) => {
  const hex = runId.slice(4)
  return `run_${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** The query string of a window. */
export const windowQuery = (start: Date, end: Date) => `start_at=${formatTimestamp(start)}&end_at=${formatTimestamp(end)}`
