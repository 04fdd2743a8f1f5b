/** Handlers of the runs group. */
import { Effect, Layer, Option, Result } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../schema/Api.js"
import { Actor } from "../../schema/Auth.js"
import { InvalidBody } from "../../schema/Errors.js"
import { AuthenticationLive } from "../auth/Authenticate.js"
import { withRetryAfter } from "../http/RetryAfter.js"
import { startServerTiming } from "../http/ServerTiming.js"
import { Runs } from "./Runs.js"
import type { RunListStart } from "./RunsRepo.js"
import { answerStatus, decodeCursor, RunListCursor } from "./RunView.js"

/**
 * The largest `offset` the run list serves: 2^53 - 1, the largest integer a JSON number and PostgreSQL's `bigint`
 * both hold exactly. A larger offset, of any length (the query accepts whole numbers of any length), is clamped to
 * it: the page is then empty, as for any offset past the organization's last run, and echoes this value.
 */
export const MaxRunListOffset = Number.MAX_SAFE_INTEGER

/**
 * Where a run list page starts (decisions.md, "Extensions beyond the contract"): an offset (clamped as above), or
 * just after the position of a `cursor` this organization's run list issued; both at once, or any other cursor, is
 * `400 invalid_body`, the runs routes' answer to a bad query.
 */
export const runListStart = (
  organizationId: string,
  params: { readonly offset?: number | undefined; readonly cursor?: string | undefined }
): Result.Result<RunListStart, InvalidBody> => {
  if (params.cursor === undefined) {
    return Result.succeed({ _tag: "Offset", offset: Math.min(params.offset ?? 0, MaxRunListOffset) })
  }
  if (params.offset !== undefined) {
    return Result.fail(new InvalidBody({ message: "send cursor or offset, not both" }))
  }
  return Option.match(decodeCursor(RunListCursor, organizationId, params.cursor), {
    onNone: () =>
      Result.fail(new InvalidBody({ message: "cursor is not a next_cursor of this organization's run list" })),
    onSome: (key) => Result.succeed({ _tag: "After", key })
  })
}

const eventStream = (run: unknown) =>
  HttpServerResponse.text(`event: run\ndata: ${JSON.stringify(run)}\n\nevent: end\ndata: {}\n\n`, {
    contentType: "text/event-stream",
    headers: { "cache-control": "no-store" }
  })

/** The runs group's handlers, over the runs service. */
const RunsHandlers = HttpApiBuilder.group(Api, "runs", (handlers) =>
  Effect.gen(function*() {
    const runs = yield* Runs
    return handlers
      .handle("create", ({ payload, request }) =>
        Effect.gen(function*() {
          const marks = yield* startServerTiming
          const actor = yield* Actor
          const outcome = yield* withRetryAfter(runs.create(actor, payload, request.headers["idempotency-key"], marks))
          const view = runs.view(outcome)
          return yield* Effect.orDie(HttpServerResponse.json(view, { status: answerStatus(view) }))
        }), { uninterruptible: true })
      .handle("list", ({ query }) =>
        Effect.gen(function*() {
          const actor = yield* Actor
          const start = yield* Effect.fromResult(runListStart(actor.organizationId, query))
          return yield* runs.list(actor.organizationId, query.limit, start)
        }))
      .handle("get", ({ params }) => Effect.flatMap(Actor, (actor) => runs.get(actor.organizationId, params.run_id)))
      .handle("stream", ({ params }) =>
        Effect.flatMap(Actor, (actor) => Effect.map(runs.get(actor.organizationId, params.run_id), eventStream)))
  }))

/**
 * The runs group, composed as the design card has it: its handlers stand on the credential verifier (the
 * `Authentication` middleware gives them the caller), on the quota ledger and the credit store (admission holds and
 * settlement captures through the run ledger built on them) and on the model provider (the runs service's calls).
 * Its requirements name those four services, not the run ledger (test/runs/RunsHttpLayer.test.ts holds it); the layers
 * provided here are the same values Server.ts and Services.ts provide, so they are built once per process.
 */
export const RunsHttp = RunsHandlers.pipe(Layer.provide(Runs.layer), Layer.provide(AuthenticationLive))
