/**
 * Handlers of the usage group. The query has passed the boundary (unknown, repeated and non-whole-number parameters
 * are the plain-text 400); here the window rules, then the ledger's limit or the daily window's length (at most 92
 * days), are checked in that order, each failing `400 invalid_parameter`. The default window and the quota period
 * follow the clock.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Clock, Effect } from "effect"
import { Api } from "../../schema/Api.js"
import { Actor } from "../../schema/Auth.js"
import { parseLedgerLimit } from "./LedgerLimit.js"
import { Usage } from "./Usage.js"
import { dailyView, ledgerView, quotaView, rollupView, runUsageView } from "./UsageView.js"
import { checkDailyWindow, parseWindow, type WindowParams } from "./Window.js"

const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

const windowOf = (params: WindowParams) => Effect.flatMap(now, (date) => parseWindow(params, date))

/** The usage group's handlers. */
export const UsageHttp = HttpApiBuilder.group(Api, "usage", (handlers) =>
  Effect.gen(function*() {
    const usage = yield* Usage
    return handlers
      .handle("rollup", ({ urlParams }) =>
        Effect.gen(function*() {
          const actor = yield* Actor
          const window = yield* windowOf(urlParams)
          return rollupView(actor.organizationId, window, yield* usage.rollup(actor.organizationId, window))
        }))
      .handle("ledger", ({ urlParams }) =>
        Effect.gen(function*() {
          const actor = yield* Actor
          const window = yield* windowOf(urlParams)
          const limit = yield* parseLedgerLimit(urlParams.limit)
          return ledgerView(actor.organizationId, window, limit, yield* usage.ledger(actor.organizationId, window, limit))
        }))
      .handle("daily", ({ urlParams }) =>
        Effect.gen(function*() {
          const actor = yield* Actor
          const window = yield* Effect.flatMap(windowOf(urlParams), checkDailyWindow)
          return dailyView(actor.organizationId, window, yield* usage.daily(actor.organizationId, window))
        }))
      .handle("run", ({ path }) =>
        Effect.gen(function*() {
          const actor = yield* Actor
          return runUsageView(actor.organizationId, yield* usage.run(actor.organizationId, path.run_id))
        }))
      .handle("quota", () =>
        Effect.gen(function*() {
          const actor = yield* Actor
          return quotaView(actor.organizationId, yield* usage.quota(actor.organizationId, yield* now))
        }))
  }))
