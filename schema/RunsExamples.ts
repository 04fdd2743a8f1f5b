/**
 * Examples of the runs routes for the OpenAPI document: answers of the service with the built-in `local` decision
 * model, ids and digests as it mints them. Plain data that imports nothing: RunsApi.ts checks each against its wire
 * schema where it applies it (`satisfies` the schema's encoded type), so an example that drifts from its schema does
 * not compile, and test/openapi/OpenApiDocument.test.ts validates each against the emitted document.
 */

/** The run id every runs example uses. */
export const ExampleRunId = "run_01a20c1576a37c4bb1f3b5159dc8a1b8"

/** A decision run over a support ticket (the README's first run). */
export const CreateRunRequest = {
  kind: "decision",
  state: { ticket: "I was charged twice on my invoice, please refund the duplicate payment." },
  questions: {
    refund: { type: "noul", instructions: "Does the customer ask for a refund?" },
    topic: {
      type: "choice",
      instructions: "What is the ticket about?",
      criteria: { billing: "invoices, payments, refunds", shipping: "parcels and delivery", login: null }
    },
    urgency: { type: "score", instructions: "How urgent is it?", criteria: ["low", "medium", "high"] }
  }
} as const

const digests = {
  input_digest: "cbf7d5deaf98c77148dd0ad5d2bcac3d7f0eba6b16e20a6bda727141f4110390",
  output_digest: "65573dce0e441b69c1bdc92bf526c547b1dcaca3a1f527c2cd6448263cc3d60c"
}

/** The settled answer to {@link CreateRunRequest}. */
export const CompletedRun = {
  run_id: ExampleRunId,
  kind: "decision",
  state: "completed",
  ...digests,
  replayed: false,
  decision: {
    model: "decision-1",
    answers: {
      refund: { type: "noul", probability: 0.6163363646417618 },
      topic: {
        type: "choice",
        choice: "billing",
        probability: 0.936720228904192,
        probabilities: { billing: 0.936720228904192, shipping: 0.03163988554790399, login: 0.03163988554790399 },
        confidence: 0.7453511605798366
      },
      urgency: {
        type: "score",
        score: 0.5,
        level: "low",
        probability: 0.3333333333333333,
        probabilities: [0.3333333333333333, 0.3333333333333333, 0.3333333333333333],
        confidence: 0
      }
    }
  },
  usage: { input_tokens: 242, output_tokens: 3 },
  cost_micros: 14,
  created_at: "2026-11-24T05:44:22Z",
  settled_at: "2026-11-24T05:44:23Z"
} as const

/** The same run read back: every stored run reads as a replay. */
export const StoredRun = { ...CompletedRun, replayed: true } as const

/** A replay of a run still pending (the model was never reached): no answers, usage or cost yet. */
export const PendingRun = {
  run_id: "run_01a20c17f3b84e0c9d2a6b1e4c8f5a73",
  kind: "decision",
  state: "pending",
  input_digest: digests.input_digest,
  replayed: true,
  created_at: "2026-11-24T05:46:02Z"
} as const

/**
 * A `cursor` of the run list: the `next_cursor` a page ending with {@link ExampleRunId} carries (cursors are valid
 * only for the organization whose list issued them).
 */
export const ExampleRunListCursor =
  "MjAyNi0xMS0yNFQwNTo0NDoyMi40ODEyMDRafDAxYTIwYzE1LTc2YTMtN2M0Yi1iMWYzLWI1MTU5ZGM4YTFiOA.RQ-C18WZ5Aw6t19awFc0Po"

/** A page of the run list: its only run, so no next page. */
export const RunListPage = {
  runs: [{
    run_id: ExampleRunId,
    kind: "decision",
    state: "completed",
    ...digests,
    replayed: true
  }],
  limit: 20,
  offset: 0,
  next_cursor: null
} as const

/** The event stream of a run: one `run` event with the stored run, then `end`. */
export const RunEventStream = `event: run\ndata: ${JSON.stringify(StoredRun)}\n\nevent: end\ndata: {}\n\n`
