/** Handlers of the runs group. */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../schema/Api.js"
import { Actor } from "../../schema/Auth.js"
import { startServerTiming } from "../http/ServerTiming.js"
import { Runs } from "./Runs.js"

/**
 * The largest `offset` the run list serves: 2^53 - 1, the largest integer a JSON number and PostgreSQL's `bigint`
 * both hold exactly. A larger offset, of any length (the query accepts whole numbers of any length), is clamped to
 * it: the page is then empty, as for any offset past the organization's last run, and echoes this value.
 */
export const MaxRunListOffset = Number.MAX_SAFE_INTEGER

const eventStream = (run: unknown) =>
  HttpServerResponse.text(`event: run\ndata: ${JSON.stringify(run)}\n\nevent: end\ndata: {}\n\n`, {
    contentType: "text/event-stream",
    headers: { "cache-control": "no-store" }
  })

/** The runs group's handlers. */
export const RunsHttp = HttpApiBuilder.group(Api, "runs", (handlers) =>
  Effect.gen(function*() {
    const runs = yield* Runs
    return handlers
      .handle("create", ({ payload, request }) =>
        Effect.gen(function*() {
          const marks = yield* startServerTiming
          const actor = yield* Actor
          const outcome = yield* runs.create(actor, payload, request.headers["idempotency-key"], marks)
          const view = runs.view(outcome)
          return yield* Effect.orDie(HttpServerResponse.json(view, { status: view.state === "pending" ? 202 : 200 }))
        }), { uninterruptible: true })
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(Actor, (actor) =>
          runs.list(
            actor.organizationId,
            urlParams.limit,
            urlParams.offset === undefined ? undefined : Math.min(urlParams.offset, MaxRunListOffset)
          )))
      .handle("get", ({ path }) => Effect.flatMap(Actor, (actor) => runs.get(actor.organizationId, path.run_id)))
      .handle("stream", ({ path }) =>
        Effect.flatMap(Actor, (actor) => Effect.map(runs.get(actor.organizationId, path.run_id), eventStream)))
  }))
