/**
 * Child processes for the benchmarks: the service (exactly as `npm start` runs it) or a bare baseline, each on a
 * free port, waited for until it answers, stopped at the end. Keeping servers out of the load generator's process
 * keeps the two from sharing one event loop.
 */
import { spawn, type ChildProcess } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { createServer } from "node:net"
import type { AddressInfo } from "node:net"

/** A free TCP port on 127.0.0.1. */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      server.close(() => resolve(port))
    })
  })

/** A running child server. */
export interface Child {
  readonly url: string
  readonly process: ChildProcess
  /** What the child wrote on stdout and stderr so far. */
  readonly output: () => string
  readonly stop: () => Promise<void>
}

const waitFor = async (url: string, child: ChildProcess, output: () => string) => {
  for (let attempt = 0; attempt < 600; attempt++) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${output()}`)
    try {
      const res = await fetch(url)
      if (res.status < 500) return
    } catch {
      // not listening yet
    }
    await new Promise((wake) => setTimeout(wake, 100))
  }
  throw new Error(`server did not answer ${url}:\n${output()}`)
}

/**
 * Starts `node [nodeArgs] --import tsx <script>` (a `.js` or `.mjs` script without tsx) with env, on `nodeBinary` (this
 * process's Node by default), and waits until `readyPath` answers.
 */
export const startNode = async (
  script: string,
  env: Record<string, string>,
  readyPath = "/healthz",
  nodeArgs: ReadonlyArray<string> = [],
  nodeBinary: string = process.execPath
): Promise<Child> => {
  const port = await freePort()
  let log = ""
  const loader = script.endsWith(".js") || script.endsWith(".mjs") ? [] : ["--import", "tsx"]
  const child = spawn(nodeBinary, [...nodeArgs, ...loader, script], {
    // No drain at stop unless asked for: no load balancer fronts a child, and `stop` kills it after 5 s.
    env: { ...process.env, SHUTDOWN_DRAIN_MS: "0", ...env, HOST: "127.0.0.1", PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"]
  })
  child.stdout!.on("data", (chunk) => (log += chunk))
  child.stderr!.on("data", (chunk) => (log += chunk))
  const url = `http://127.0.0.1:${port}`
  await waitFor(`${url}${readyPath}`, child, () => log)
  return {
    url,
    process: child,
    output: () => log,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve()
        child.once("exit", () => resolve())
        child.kill("SIGTERM")
        setTimeout(() => child.kill("SIGKILL"), 5_000).unref()
      })
  }
}

/**
 * The service's settings in the run benchmarks: PostgreSQL at `databaseUrl`, the benchmarks' upstream (bench/upstream.ts
 * at `upstreamUrl`) as its OpenAI-compatible decision model, the local payment processor, errors only in its log.
 */
export const benchServiceEnv = (databaseUrl: string, upstreamUrl: string): Record<string, string> => ({
  DATABASE_URL: databaseUrl,
  BILLING_PROVIDER: "local",
  DECISION_PROVIDER: "openai",
  DECISION_PROVIDER_URL: `${upstreamUrl}/v1`,
  DECISION_PROVIDER_MODEL: "bench",
  LOG_LEVEL: "error"
})

/** CPU time (user + system, ms) a child has used so far, read from /proc. */
export const cpuMillis = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  const ticks = Number(fields[11]) + Number(fields[12])
  return (ticks * 1000) / 100
}

/** The pids of a process and of all its descendants (its workers), read from /proc. */
export const processTree = (pid: number): ReadonlyArray<number> => {
  const pids = [pid]
  for (let index = 0; index < pids.length; index++) {
    try {
      for (const task of readdirSync(`/proc/${pids[index]}/task`)) {
        const children = readFileSync(`/proc/${pids[index]}/task/${task}/children`, "utf8").trim()
        if (children !== "") pids.push(...children.split(" ").map(Number))
      }
    } catch {
      // the process ended while being read
    }
  }
  return pids
}

/** CPU time (ms) a process and all its descendants (its workers) have used so far. */
export const cpuMillisOfTree = (pid: number): number =>
  processTree(pid).reduce((sum, each) => {
    try {
      return sum + cpuMillis(each)
    } catch {
      return sum
    }
  }, 0)

/**
 * CPU time (ms) used so far by every process whose command name is `name` (e.g. all PostgreSQL backends), those that
 * ended included: a backend that exits (a pool closing an idle connection) takes its CPU out of the live sum, but
 * its parent (the postmaster) has it then among its reaped children's times, counted here too. Without those, a row
 * in which backends ended printed a negative PostgreSQL CPU per run.
 */
export const cpuMillisOfCommand = (name: string): number => {
  let total = 0
  for (const entry of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      if (stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")) !== name) continue
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      // utime, stime, then cutime and cstime (children waited for)
      total += ((Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 1000) / 100
    } catch {
      // the process ended while being read
    }
  }
  return total
}
