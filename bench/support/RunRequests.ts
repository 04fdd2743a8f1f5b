/**
 * The decision run the benchmarks send: one `noul` question about a ~1.2 KB support ticket, as `POST /v1/runs` from
 * one of the seeded organizations in turn, each request with an idempotency key of its own.
 */
import { letterRequest } from "../../src/providers/LetterReadout.js"
import type { BenchOrganization } from "./BenchSeed.js"
import type { LoadRequest } from "./Load.js"

/** The ticket the run is about. */
export const Ticket = "Hello, I am writing about order 84-1192. ".repeat(30).slice(0, 1_200)

/** The run's one question. */
export const RefundQuestion = "Does the customer ask for a refund of a duplicate charge?"

/** The chat-completions body the service sends the upstream for the bench's one question: sent straight to the
 * upstream, it is the baseline a run's added latency is measured against. */
export const chatBody = JSON.stringify(letterRequest("bench", {
  state: Ticket,
  context: [],
  instructions: RefundQuestion,
  type: "noul",
  options: [{ name: "yes", description: null }, { name: "no", description: null }],
  thinkTokens: 0
}, null))

/** The run's body, with `extra` fields (e.g. `deadline_ms`). */
export const runBody = (extra: Readonly<Record<string, unknown>> = {}) =>
  JSON.stringify({
    kind: "decision",
    state: Ticket,
    questions: { refund: { type: "noul", instructions: RefundQuestion } },
    ...extra
  })

// One counter for every maker of a process: keys never repeat across a benchmark's rows.
let sent = 0

/** Requests of `body` from `organizations` in turn, keyed `<label>-<pid>-<n>`. */
export const runRequests = (organizations: ReadonlyArray<BenchOrganization>, label: string, body = runBody()) =>
(): LoadRequest => {
  const organization = organizations[sent % organizations.length]!
  sent += 1
  return {
    method: "POST",
    path: "/v1/runs",
    headers: {
      authorization: `Bearer ${organization.secret}`,
      "content-type": "application/json",
      "idempotency-key": `${label}-${process.pid}-${sent}`
    },
    body
  }
}
