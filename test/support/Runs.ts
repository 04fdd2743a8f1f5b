/** Requests for the runs routes: a small valid decision, and `POST /v1/runs` with a key and an idempotency key. */
import { Effect } from "effect"
import { call, type CallOptions } from "./Api.js"

/** A one-question decision (a `noul`). */
export const oneQuestion = (extra: Record<string, unknown> = {}) => ({
  kind: "decision",
  state: { ticket: "My invoice was charged twice, please refund the duplicate payment" },
  questions: { refund: { type: "noul", instructions: "Does the customer ask for a refund?" } },
  ...extra
})

/** A decision with a choice and a score. */
export const twoQuestions = (extra: Record<string, unknown> = {}) => ({
  kind: "decision",
  state: "The parcel never arrived and tracking has not moved for ten days.",
  questions: {
    topic: {
      type: "choice",
      instructions: "What is the ticket about?",
      criteria: { billing: "payments and refunds", shipping: "delivery and tracking", login: null }
    },
    urgency: { type: "score", instructions: "How urgent is it?", criteria: ["low", "medium", "high"] }
  },
  ...extra
})

let counter = 0

/** A fresh idempotency key. */
export const freshKey = () => `key-${Date.now()}-${++counter}`

/** `POST /v1/runs` with a credential and (unless null) an idempotency key. */
export const postRun = (secret: string, body: unknown, idempotencyKey: string | null = freshKey(), options: CallOptions = {}) =>
  call("POST", "/v1/runs", {
    secret,
    body,
    ...options,
    headers: { ...(idempotencyKey === null ? {} : { "idempotency-key": idempotencyKey }), ...options.headers }
  })

/** Waits until a fiber has had a moment (for background writes). */
export const settleMoment = Effect.sleep("20 millis")
