/**
 * Admission: one statement (`arbiter_admit`, migrations/0007), so one short transaction, that checks and holds
 * credit and quota atomically for a batch of runs of any organizations (see Batcher). Under each organization's
 * account lock, for each of its runs in arrival order:
 * a key that already owns a run with the same input digest is a replay (no quota or credit check); otherwise the
 * period quota must cover the whole spend ceiling and the token reservation (429); a key owning a run with another
 * digest is `409 idempotency_conflict`; with billing on, available credit must cover the ceiling (402); then the run
 * is stored `pending` with its holds. A refused run stores nothing, so its key stays reusable. A run whose deadline
 * passed while it waited for its batch is not admitted at all (504, nothing stored).
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Exit, Layer } from "effect"
import {
  DatabaseUnavailable,
  DeadlineExceeded,
  IdempotencyConflict,
  InsufficientCredits,
  OrganizationSpendQuotaExhausted,
  OrganizationTokenQuotaExhausted
} from "../../schema/Errors.js"
import { orUnavailable } from "../db/Unavailable.js"
import { uuidFromHex, uuidv7Hex } from "../Ids.js"
import { makeBatcher } from "./Batcher.js"
import { SPEND_CEILING_MICROS } from "./Pricing.js"
import type { RunOrigin, RunRow } from "./RunsRepo.js"

/** A run asking to be admitted. */
export interface AdmissionRequest {
  readonly organizationId: string
  readonly origin: RunOrigin
  readonly idempotencyKey: string
  readonly kind: "decision" | "verdict"
  readonly inputDigest: string
  readonly holdTokens: number
  /** When the run's deadline passes (epoch milliseconds). */
  readonly deadline: number
}

/** An admitted run, now stored `pending` with its holds. */
export interface AdmittedRun {
  readonly id: string
  readonly createdAt: Date
  readonly deadlineAt: Date
}

/** What admission decided. */
export type AdmissionOutcome =
  | { readonly _tag: "Admitted"; readonly run: AdmittedRun }
  | { readonly _tag: "Replayed"; readonly run: RunRow }

/** Why admission refused a run. */
export type AdmissionError =
  | OrganizationSpendQuotaExhausted
  | OrganizationTokenQuotaExhausted
  | IdempotencyConflict
  | InsufficientCredits
  | DeadlineExceeded
  | DatabaseUnavailable

type Decision = Exit.Exit<AdmissionOutcome, Exclude<AdmissionError, DatabaseUnavailable>>

/** What `arbiter_admit` decided for one request. */
type AdmitOutcome =
  | { readonly outcome: "admitted"; readonly hold_credit: boolean }
  | { readonly outcome: "replayed"; readonly run: Record<string, any> }
  | { readonly outcome: "spend_quota" | "token_quota"; readonly limit: number; readonly used: number; readonly held: number; readonly asked: number }
  | { readonly outcome: "conflict" }
  | { readonly outcome: "credits"; readonly available: number; readonly asked: number }

/** A stored run as `row_to_json` renders it. */
const runRowOf = (json: Record<string, any>): RunRow => ({
  ...(json as unknown as RunRow),
  created_at: new Date(json.created_at),
  settled_at: json.settled_at === null ? null : new Date(json.settled_at)
})

const decide = (request: AdmissionRequest, admitted: AdmittedRun, result: AdmitOutcome): Decision => {
  switch (result.outcome) {
    case "admitted":
      return Exit.succeed({ _tag: "Admitted", run: admitted })
    case "replayed":
      return Exit.succeed({ _tag: "Replayed", run: runRowOf(result.run) })
    case "spend_quota":
      return Exit.fail(new OrganizationSpendQuotaExhausted({
        message: `period spend quota: limit ${result.limit} micro-USD, used ${result.used}, held ${result.held}, ` +
          `this run asks for ${result.asked}`
      }))
    case "token_quota":
      return Exit.fail(new OrganizationTokenQuotaExhausted({
        message: `period token quota: limit ${result.limit} tokens, used ${result.used}, held ${result.held}, ` +
          `this run asks for ${result.asked}`
      }))
    case "conflict":
      return Exit.fail(new IdempotencyConflict({
        message: `idempotency key ${JSON.stringify(request.idempotencyKey)} was used with a different body`
      }))
    case "credits":
      return Exit.fail(new InsufficientCredits({
        message: `available credit of ${Math.max(0, result.available)} micro-USD cannot hold the run's ceiling of ` +
          `${result.asked}; add credit and send the request again`
      }))
  }
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const admitBatch = (requests: ReadonlyArray<AdmissionRequest>) =>
    Effect.gen(function*() {
      const now = new Date()
      const decisions: Array<Decision> = new Array(requests.length)
      const runs: Array<AdmittedRun> = new Array(requests.length)
      const payload: Array<Record<string, unknown>> = []
      const positions: Array<number> = []
      requests.forEach((request, index) => {
        if (request.deadline <= now.getTime()) {
          decisions[index] = Exit.fail(new DeadlineExceeded({ message: "the run's deadline passed before it could be admitted" }))
          return
        }
        const run: AdmittedRun = {
          id: uuidFromHex(uuidv7Hex(now.getTime())),
          createdAt: now,
          deadlineAt: new Date(request.deadline)
        }
        runs[index] = run
        payload.push({
          i: payload.length,
          org: request.organizationId,
          id: run.id,
          origin: request.origin,
          key: request.idempotencyKey,
          kind: request.kind,
          digest: request.inputDigest,
          hold_tokens: request.holdTokens,
          deadline_ms: request.deadline - now.getTime()
        })
        positions.push(index)
      })
      if (payload.length > 0) {
        const [row] = yield* orUnavailable(
          sql<{ outcomes: ReadonlyArray<AdmitOutcome> }>`SELECT arbiter_admit(${now}, ${SPEND_CEILING_MICROS},
            ${JSON.stringify(payload)}::json) AS outcomes`
        )
        const outcomes = row?.outcomes ?? []
        positions.forEach((index, slot) => {
          decisions[index] = decide(requests[index]!, runs[index]!, outcomes[slot]!)
        })
      }
      return decisions
    })

  const batcher = yield* makeBatcher(admitBatch, { maxBatch: 128, maxInFlight: 2 })

  return {
    /** Admits a run or explains why not (or replays the run its key already owns). */
    admit: (request: AdmissionRequest): Effect.Effect<AdmissionOutcome, AdmissionError> => batcher.submit(request)
  }
})

/** Admission of runs. */
export class Admission extends Context.Tag("Admission")<Admission, Effect.Effect.Success<typeof make>>() {
  /** Admission over the SQL client. */
  static readonly layer = Layer.effect(Admission, make)
}
