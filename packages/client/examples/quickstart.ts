import { Console, Effect } from "effect"
import { FetchHttpClient } from "effect/http"
import { ArbiterClient, ArbiterClientConfig } from "@arbiter/client"

const ticket = {
  kind: "decision",
  state: { ticket: "I was charged twice on my invoice, please refund the duplicate payment." },
  questions: {
    refund: { type: "noul", instructions: "Does the customer ask for a refund?" },
    topic: {
      type: "choice",
      instructions: "What is the ticket about?",
      criteria: { billing: "invoices, payments, refunds", shipping: "parcels and delivery", login: null }
    }
  }
} as const

const print = (line: Record<string, unknown>) => Console.log(JSON.stringify(line))

const program = Effect.gen(function*() {
  // ARBITER_BASE_URL (default http://127.0.0.1:8080) and ARBITER_API_KEY: an owner's key.
  const { baseUrl, apiKey } = yield* ArbiterClientConfig
  const owner = yield* ArbiterClient.make({ baseUrl, apiKey })
  const key = yield* owner.keys.create({ payload: { name: "support-triage", scopes: ["runs_write", "runs_read"] } })
  yield* print({ step: "key", id: key.id, scopes: key.scopes })

  // A client acting with the new key (its secret is shown once: keep it somewhere safe).
  const triage = yield* ArbiterClient.make({ baseUrl, apiKey: key.secret })

  // One Idempotency-Key per logical run: resending it after a lost answer replays the run, never charges twice.
  const idempotencyKey = `triage-${crypto.randomUUID()}`
  const run = yield* triage.runs.create({ headers: { "idempotency-key": idempotencyKey }, payload: ticket })
  yield* print({ step: "run", run_id: run.run_id, state: run.state, answers: run.decision?.answers ?? null })

  // The same key with another body is refused with its own code, carrying the request id for support.
  const refusal = yield* triage.runs.create({
    headers: { "idempotency-key": idempotencyKey },
    payload: { ...ticket, state: { ticket: "A different ticket." } }
  }).pipe(
    Effect.as({ code: "none", request_id: null as string | null }),
    Effect.catchTag("idempotency_conflict", (error) =>
      Effect.succeed({ code: error._tag, request_id: error.request_id ?? null }))
  )
  yield* print({ step: "conflict", ...refusal })

  const selection = yield* triage.router.select({
    headers: {},
    payload: {
      prompt: "Debug this Python program: the script crashes with a KeyError when the config file lacks a key.",
      policy: "cost_efficient"
    }
  })
  yield* print({ step: "selection", model: selection.model.id, run_id: selection.run_id, reason: selection.reason })
})

await Effect.runPromise(program.pipe(Effect.provide(FetchHttpClient.layer)))
