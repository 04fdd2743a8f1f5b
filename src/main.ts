/** Starts the server with the settings of the environment. */
import { NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { AppConfig } from "./AppConfig.js"
import { ServerLive } from "./Server.js"

NodeRuntime.runMain(Layer.launch(ServerLive.pipe(Layer.provide(AppConfig.layer))), { disablePrettyLogger: true })
