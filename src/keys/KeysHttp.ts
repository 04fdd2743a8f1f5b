/** Handlers of the keys group. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../schema/Api.js"
import { Actor } from "../../schema/Auth.js"
import { Keys } from "./Keys.js"

/** The keys group's handlers. */
export const KeysHttp = HttpApiBuilder.group(Api, "keys", (handlers) =>
  Effect.gen(function*() {
    const keys = yield* Keys
    return handlers
      .handle("list", () => Effect.flatMap(Actor, (actor) => Effect.map(keys.list(actor.organizationId), (list) => ({ keys: list }))))
      .handle("get", ({ params }) => Effect.flatMap(Actor, (actor) => keys.get(actor.organizationId, params.key_id)))
      .handle("create", ({ payload }) => Effect.flatMap(Actor, (actor) => keys.create(actor, payload)))
      .handle("revoke", ({ params }) => Effect.flatMap(Actor, (actor) => keys.revoke(actor, params.key_id)))
      .handle("update", ({ params, payload }) =>
        Effect.flatMap(Actor, (actor) => keys.update(actor, params.key_id, payload.limits)))
      .handle("rotate", ({ params }) => Effect.flatMap(Actor, (actor) => keys.rotate(actor, params.key_id)))
  }))
