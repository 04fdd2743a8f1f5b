/** Starts the server with the settings of the environment: one process, or `WORKERS` of them (server/Workers.ts). */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Effect, Exit, Layer, Logger, Option, Runtime } from "effect"
import { isSqlError } from "effect/sql/SqlError"
import { AppConfig } from "./config/AppConfig.js"
import { exitOnSettingsProblems } from "./config/SettingsCheck.js"
import { driverCause } from "./db/SqlErrors.js"
import { ServerLive } from "./Server.js"
import { runWorkers } from "./server/Workers.js"

/**
 * A start that failed on its database, in one line with the driver's own words (`connect ECONNREFUSED ...`,
 * `password authentication failed ...`) and where to look; any other failure with its whole cause.
 */
const reportFailure = (cause: Cause.Cause<unknown>) => {
  if (Cause.hasInterruptsOnly(cause)) return Effect.void
  const error = Option.getOrUndefined(Cause.findErrorOption(cause))
  if (!isSqlError(error)) return Effect.logError(cause)
  const driver = driverCause(error) as { readonly message?: unknown; readonly code?: unknown } | undefined
  const said = typeof driver?.message === "string" && driver.message !== "" ? `: ${driver.message}` : ""
  const code = typeof driver?.code === "string" ? ` (${driver.code})` : ""
  return Effect.logError(`${error.message}${said}${code}; check DATABASE_URL and that the database accepts connections`)
}

/**
 * The server until it stops. A start that fails on its database is logged as one logfmt line, as the server logs
 * before its own logging (LOG_FORMAT) is set up; its settings were checked before (SettingsCheck.ts).
 */
const program = Layer.launch(ServerLive.pipe(Layer.provide(AppConfig.layer))).pipe(
  Effect.tapCause(reportFailure),
  Effect.provideService(Logger.CurrentLoggers, new Set([Logger.consoleLogFmt]))
)

/**
 * A stop by SIGTERM or SIGINT (the program interrupted, nothing else) is the server's normal end: exit code 0, which
 * process supervisors and container platforms read as a clean stop. Anything else exits as Effect's default says.
 */
const teardown: Runtime.Teardown = (exit, onExit) =>
  Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)

// Every setting is checked before any process starts, connects or migrates: a wrong one stops the start here.
exitOnSettingsProblems({ serving: true })
runWorkers(() => NodeRuntime.runMain(program, { disableErrorReporting: true, teardown }))
