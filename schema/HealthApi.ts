/**
 * Liveness and readiness (no credential, no scope; query strings ignored). decisions.md, "Health":
 * `200 {"status":"ok"}`; readiness `200 {"status":"ready","checks":{...}}` or `503 {"status":"unavailable",...}`.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { operationDocs } from "./OperationDocs.js"
import { CommonErrors } from "./RouteErrors.js"

const Checks = Schema.Struct({
  database: Schema.Literals(["ok", "unavailable"]).annotate({ description: "the database answers a query" }),
  migrations: Schema.Literals(["applied", "pending", "unknown"]).annotate({
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
    HttpApiEndpoint.get("healthz", "/healthz", { success: Live, error: CommonErrors })
      .annotate(OpenApi.Summary, "Liveness")
      .annotate(
        OpenApi.Transform,
        operationDocs({ responses: { 200: { summary: "the process answers", value: { status: "ok" } } } })
      )
  )
  .add(
    HttpApiEndpoint.get("readyz", "/readyz", {
      success: [Ready, NotReady.pipe(HttpApiSchema.status(503))],
      error: CommonErrors
    })
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
  .annotate(OpenApi.Description, "Liveness and readiness probes, answered without a credential.")
{}
