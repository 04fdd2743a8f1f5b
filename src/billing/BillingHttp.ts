/** Handlers of the billing group. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../schema/Api.js"
import { Actor } from "../../schema/Auth.js"
import { Billing } from "./Billing.js"

/** The billing group's handlers. */
export const BillingHttp = HttpApiBuilder.group(Api, "billing", (handlers) =>
  Effect.gen(function*() {
    const billing = yield* Billing
    return handlers
      .handle("summary", () => Effect.flatMap(Actor, (actor) => billing.summary(actor.organizationId)))
      .handle("checkout", ({ payload }) => Effect.flatMap(Actor, (actor) => billing.checkout(actor.organizationId, payload.amount_micros)))
      .handle("portal", () => Effect.flatMap(Actor, (actor) => billing.portal(actor.organizationId)))
      .handle("autoRecharge", ({ payload }) =>
        Effect.flatMap(Actor, (actor) => billing.setAutoRecharge(actor.organizationId, payload)))
  }))
