/** Starts the server with the settings of the environment: one process, or `WORKERS` of them (Workers.ts). */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Effect, Exit, Layer, Logger, Runtime } from "effect"
import { AppConfig } from "./config/AppConfig.js"
import { exitOnSettingsProblems } from "./config/SettingsCheck.js"
import { ServerLive } from "./Server.js"
import { runWorkers } from "./Workers.js"

/**
 * The server until it stops. A start that fails (its settings, its database) is logged as one logfmt line, as the
 * server logs before its own logging (LOG_FORMAT) is set up.
 */
const program = Layer.launch(ServerLive.pipe(Layer.provide(AppConfig.layer))).pipe(
  Effect.tapCause((cause) => Cause.hasInterruptsOnly(cause) ? Effect.void : Effect.logError(cause)),
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
