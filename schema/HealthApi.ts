/**
 * Liveness and readiness (no credential, no scope; query strings ignored). decisions.md, "Health":
 * `200 {"status":"ok"}`; readiness `200 {"status":"ready","checks":{...}}` or `503 {"status":"unavailable",...}`.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { operationDocs } from "./OperationDocs.js"

const Checks = Schema.Struct({
  database: Schema.Literal("ok", "unavailable").annotations({ description: "the database answers a query" }),
  migrations: Schema.Literal("applied", "pending", "unknown").annotations({
    description: "every migration shipped with this build is recorded as applied"
  })
})

/** `GET /healthz` body. */
export const Live = Schema.Struct({ status: Schema.Literal("ok") })

/** `GET /readyz` body when ready. */
export const Ready = Schema.Struct({ status: Schema.Literal("ready"), checks: Checks })

/** `GET /readyz` body when not ready (status 503). */
export const NotReady = Schema.Struct({ status: Schema.Literal("unavailable"), checks: Checks })

const ReadyExample: typeof Ready.Encoded = { status: "ready", checks: { database: "ok", migrations: "applied" } }

const NotReadyExample: typeof NotReady.Encoded = {
  status: "unavailable",
  checks: { database: "unavailable", migrations: "unknown" }
}

/** The health group. */
export class HealthApi extends HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("healthz", "/healthz")
      .addSuccess(Live)
      .annotate(OpenApi.Summary, "Liveness")
      .annotate(
        OpenApi.Transform,
        operationDocs({ responses: { 200: { summary: "the process answers", value: { status: "ok" } } } })
      )
  )
  .add(
    HttpApiEndpoint.get("readyz", "/readyz")
      .addSuccess(Ready)
      .addSuccess(NotReady, { status: 503 })
      .annotate(OpenApi.Summary, "Readiness: the database answers and migrations are applied")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          responses: {
            200: { summary: "ready to serve", value: ReadyExample },
            503: { summary: "the database does not answer", value: NotReadyExample }
          }
        })
      )
  )
{}
