/**
 * `WORKERS` server processes sharing one port, by default one per CPU the process may use (node:cluster starts them;
 * each listens with sockets of its own, SharedPort.ts). Each worker is a whole server with its own pools, caches and
 * ledger leases; only PostgreSQL is shared, where every rule that must be exact is decided (docs/ledger.md). The
 * primary serves nothing: it reserves the port, starts the workers, restarts one that dies (or stops, when none came
 * up yet), and stops them all on SIGTERM or SIGINT. The embedded database belongs to one process, so without
 * `DATABASE_URL` the service runs as one. The primary makes the local payment processor's signing key when none is
 * set, so a link one worker signs verifies on every other.
 */
import cluster from "node:cluster"
import { randomBytes } from "node:crypto"
import { Effect, Option } from "effect"
import { ListenAddressConfig } from "../config/AppConfig.js"
import { availableCpus } from "../config/CpuLimit.js"
import { isListeningMessage, reservePort, type SharedAddress, workerEnv } from "./SharedPort.js"
import { serveInstanceMetrics } from "../telemetry/InstanceMetrics.js"

/**
 * The processes to run: `WORKERS` (1 to 256), or the CPUs the process may use (its container's CPU limit where set,
 * config/CpuLimit.ts); 1 without `DATABASE_URL`.
 */
export const workerCount = (env: NodeJS.ProcessEnv = process.env, cpus: () => number = availableCpus): number => {
  if (env.DATABASE_URL === undefined || env.DATABASE_URL === "") return 1
  const given = env.WORKERS
  if (given === undefined || given === "") return cpus()
  const count = Number(given)
  if (!Number.isInteger(count) || count < 1 || count > 256) throw new Error(`WORKERS must be 1 to 256, not ${JSON.stringify(given)}`)
  return count
}

/**
 * V8 flags every server process runs with (`npm start` passes them to the first process, the primary to every worker):
 * 32 MiB semi-spaces instead of 16, so the many short-lived objects of runs in flight die young instead of being
 * copied and promoted again and again (docs/performance.md).
 */
export const ServerNodeFlags: ReadonlyArray<string> = ["--max-semi-space-size=32"]

/** `execArgv` with the server's V8 flags added where not given already. */
export const withServerNodeFlags = (execArgv: ReadonlyArray<string>): Array<string> => [
  ...ServerNodeFlags.filter((flag) => !execArgv.some((given) => given.startsWith(flag.split("=")[0]!))),
  ...execArgv
]

/** A dying worker is started again, but not more often than this. */
const RestartDelayMs = 1_000

/**
 * Runs `serve` in this process, or in `WORKERS` worker processes started from it: this process then reserves their
 * port (SharedPort.ts) and supervises them.
 */
export const runWorkers = (serve: () => void): void => {
  if (!cluster.isPrimary) return serve()
  const count = workerCount()
  if (count === 1) return serve()
  process.env.LOCAL_BILLING_SIGNING_KEY ??= randomBytes(32).toString("hex")
  const address = Option.getOrUndefined(Effect.runSync(Effect.option(ListenAddressConfig)))
  // `HOST` and `PORT` that do not parse (main.ts checks them all before this, so only a caller that did not): the
  // workers start anyway, to report them as a single process would, and stop.
  if (address === undefined) return superviseWorkers(count, undefined)
  reservePort(address).then(
    (reserved) => superviseWorkers(count, reserved),
    (error: Error) => {
      console.error(error.message)
      process.exit(1)
    }
  )
}

const superviseWorkers = (count: number, shared: SharedAddress | undefined): void => {
  let stopping = false
  // Until a worker has come up, a worker that stops means the service cannot start (its settings, its database):
  // the primary stops too, with the worker's code, as one process would, instead of starting workers forever.
  let served = false
  let failure: number | undefined
  cluster.setupPrimary({ execArgv: withServerNodeFlags(process.execArgv) })
  const start = () => cluster.fork(shared === undefined ? undefined : workerEnv(shared))
  cluster.on("message", (_worker, message) => {
    if (isListeningMessage(message)) served = true
  })
  cluster.on("exit", (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(failure ?? 0)
      return
    }
    if (!served) {
      console.error(`worker ${worker.process.pid} stopped (${signal ?? code}) before the service came up; stopping`)
      failure = typeof code === "number" && code !== 0 ? code : 1
      return stop("SIGTERM")
    }
    console.error(`worker ${worker.process.pid} stopped (${signal ?? code}); starting another`)
    setTimeout(start, RestartDelayMs)
  })
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return
    stopping = true
    const workers = Object.values(cluster.workers ?? {})
    if (workers.length === 0) process.exit(failure ?? 0)
    for (const worker of workers) worker?.process.kill(signal)
  }
  // Each worker drains on the signal (src/server/Drain.ts); the primary exits once they all have.
  const forward = (signal: NodeJS.Signals) => {
    if (!stopping) console.error(`shutdown: ${signal}; forwarding it to ${Object.keys(cluster.workers ?? {}).length} workers`)
    stop(signal)
  }
  process.on("SIGTERM", () => forward("SIGTERM"))
  process.on("SIGINT", () => forward("SIGINT"))
  // The instance's one `/metrics`, adding up the workers' figures (src/telemetry/InstanceMetrics.ts).
  serveInstanceMetrics().then(
    (url) => url !== undefined && console.error(`metrics on ${url}`),
    (error: Error) => {
      console.error(`metrics: ${error.message}`)
      failure = 1
      stop("SIGTERM")
    }
  )
  for (let index = 0; index < count; index++) start()
}
