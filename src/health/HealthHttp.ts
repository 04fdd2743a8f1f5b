/** Handlers of the health group. */
import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { Api } from "../../schema/Api.js"
import { Readiness } from "./Readiness.js"

/** The health group's handlers. */
export const HealthHttp = HttpApiBuilder.group(Api, "health", (handlers) =>
  Effect.gen(function*() {
    const readiness = yield* Readiness
    return handlers
      .handle("healthz", () => Effect.succeed({ status: "ok" as const }))
      .handle("readyz", () =>
        Effect.map(readiness.check, (report) =>
          report.ready
            ? { status: "ready" as const, checks: report.checks }
            : { status: "unavailable" as const, checks: report.checks }))
  }))
