/**
 * `MIGRATIONS=off`: the service never migrates (the deploy runs `arbiter migrate`). A server started on a database
 * whose schema is older than its build waits at this gate before building its services, asking again every second;
 * meanwhile a small responder on the service's address answers `GET /healthz` 200, `GET /readyz` 503 with the
 * database's checks, and everything else `503 database_unavailable`, each with its `x-request-id`. Once the schema is
 * current, the server builds its app while the responder still answers, and closes the responder just before its own
 * sockets listen (`closeWaitingResponder`, Listen.ts). With `MIGRATIONS=auto`, or a current schema, it opens at once.
 */
import { Context, Effect, Layer, Option, Schedule } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { AppConfig } from "../config/AppConfig.js"
import { appliedVersion, readMigrations } from "../db/Migrations.js"
import { requestIdFor } from "../http/RequestId.js"
import { acceptOn, reservePort, sharedAddress } from "./SharedPort.js"

/** How often the waiting server asks the database for its schema. */
const PollMs = 1_000

/** What the database said when last asked: its newest migration, or none when it did not answer. */
interface SchemaState {
  version: Option.Option<number>
}

const json = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { "content-type": "application/json", connection: "close" })
  response.end(JSON.stringify(body))
}

/** The responder's answers: liveness, readiness from `state`, and `503 database_unavailable` to everything else. */
const answer = (state: SchemaState, expected: number) => (request: IncomingMessage, response: ServerResponse) => {
  const requestId = requestIdFor(request.headers["x-request-id"])
  response.setHeader("x-request-id", requestId)
  const path = (request.url ?? "/").split("?")[0]
  if (request.method === "GET" && path === "/healthz") return json(response, 200, { status: "ok" })
  if (request.method === "GET" && path === "/readyz") {
    const checks = Option.match(state.version, {
      onNone: () => ({ database: "unavailable", migrations: "unknown" }),
      onSome: () => ({ database: "ok", migrations: "pending" })
    })
    return json(response, 503, { status: "unavailable", checks })
  }
  json(response, 503, {
    error: {
      code: "database_unavailable",
      message: `the database's schema is older than this build (migration ${expected}); ` +
        "the service starts once `arbiter migrate` has applied the migrations",
      request_id: requestId
    }
  })
}

/**
 * The responder, listening on the service's address (the primary's port under WORKERS); returns how to close it, at
 * the latest when the scope closes.
 */
const respondWhileWaiting = (state: SchemaState, expected: number) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const server = createServer(answer(state, expected))
    const accepting = yield* Effect.tryPromise({
      try: async () => acceptOn(server, sharedAddress() ?? await reservePort({ host: config.host, port: config.port }), 1),
      catch: (error) => error as Error
    })
    let closed: Promise<void> | undefined
    const close = Effect.promise(() =>
      closed ??= new Promise<void>((resolve) => {
        accepting.stop(resolve)
        server.closeAllConnections()
      })
    )
    yield* Effect.addFinalizer(() => close)
    return close
  })

/** The responder of a server waiting at the gate: closed by the listener just before it listens. */
export class WaitingResponder extends Context.Service<WaitingResponder, { readonly close: Effect.Effect<void> }>()(
  "WaitingResponder"
) {}

/** Closes the gate's responder, if this server waited at the gate (a no-op otherwise). */
export const closeWaitingResponder = Effect.flatMap(
  Effect.serviceOption(WaitingResponder),
  Option.match({ onNone: () => Effect.void, onSome: (responder) => responder.close })
)

const Open = WaitingResponder.of({ close: Effect.void })

/** Opens once the database holds every migration of this build (at once with `MIGRATIONS=auto`). */
export const SchemaGate = Layer.effect(
  WaitingResponder,
  Effect.gen(function*() {
    if ((yield* AppConfig).migrations === "auto") return Open
    const sql = yield* SqlClient.SqlClient
    const expected = readMigrations().reduce((max, file) => Math.max(max, file.id), 0)
    const ask = appliedVersion.pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.timeout("2 seconds"),
      Effect.option
    )
    const state: SchemaState = { version: yield* ask }
    const current = () => Option.isSome(state.version) && state.version.value >= expected
    if (current()) return Open
    yield* Effect.logWarning(
      `schema: the database is at migration ${Option.getOrElse(state.version, () => "(unknown)")}, this build needs ` +
        `${expected}; MIGRATIONS=off: waiting for \`arbiter migrate\`, /readyz answers 503 meanwhile`
    )
    const close = yield* respondWhileWaiting(state, expected)
    yield* Effect.flatMap(ask, (version) => Effect.sync(() => (state.version = version))).pipe(
      Effect.repeat({ schedule: Schedule.spaced(PollMs), until: current })
    )
    yield* Effect.logInfo(`schema: migration ${expected} applied; starting`)
    return WaitingResponder.of({ close })
  })
)
