/** Starts the server with the settings of the environment: one process, or `WORKERS` of them (Workers.ts). */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Layer } from "effect"
import { AppConfig } from "./config/AppConfig.js"
import { ServerLive } from "./Server.js"
import { runWorkers } from "./Workers.js"

runWorkers(() =>
  NodeRuntime.runMain(Layer.launch(ServerLive.pipe(Layer.provide(AppConfig.layer))))
)
