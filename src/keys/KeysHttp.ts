/** Handlers of the keys group. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../schema/Api.js"
import { Actor } from "../../schema/Auth.js"
import { Keys } from "./Keys.js"

/** The keys group's handlers. */
export const KeysHttp = HttpApiBuilder.group(Api, "keys", (handlers) =>
  Effect.gen(function*() {
    const keys = yield* Keys
    return handlers
      .handle("list", () => Effect.flatMap(Actor, (actor) => Effect.map(keys.list(actor.organizationId), (list) => ({ keys: list }))))
      .handle("get", ({ path }) => Effect.flatMap(Actor, (actor) => keys.get(actor.organizationId, path.key_id)))
      .handle("create", ({ payload }) => Effect.flatMap(Actor, (actor) => keys.create(actor, payload)))
      .handle("revoke", ({ path }) => Effect.flatMap(Actor, (actor) => keys.revoke(actor, path.key_id)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(Actor, (actor) => keys.update(actor, path.key_id, payload.limits)))
      .handle("rotate", ({ path }) => Effect.flatMap(Actor, (actor) => keys.rotate(actor, path.key_id)))
  }))
