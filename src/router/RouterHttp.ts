/** Handlers of the router group; `POST /v1/router/select` answers with `Server-Timing` like `POST /v1/runs`. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../schema/Api.js"
import { Actor } from "../../schema/Auth.js"
import { withRetryAfter } from "../http/RetryAfter.js"
import { startServerTiming } from "../http/ServerTiming.js"
import { ModelRouter } from "./ModelRouter.js"

/** The router group's handlers. */
export const RouterHttp = HttpApiBuilder.group(Api, "router", (handlers) =>
  Effect.gen(function*() {
    const router = yield* ModelRouter
    return handlers
      .handle("select", ({ headers, payload }) =>
        Effect.gen(function*() {
          const marks = yield* startServerTiming
          const actor = yield* Actor
          return yield* withRetryAfter(router.select(actor, payload, headers["idempotency-key"], marks))
        }), { uninterruptible: true })
      .handle("taskTypes", () => router.taskTypes)
      .handle("models", () => router.models)
  }))
