/**
 * The service in its own process, as `npm start` runs it (so `/healthz` measures its event loop alone), and a prober
 * of its `/healthz` beside a bare `node:http` server's: what the fuzz tests use to bound how long any request holds
 * the service's event loop. The measure is the service's main thread's time on a core while a probe is out, which a
 * machine busy elsewhere does not stretch.
 */
import { Effect, Layer } from "effect"
import { Worker } from "node:worker_threads"
import { ServerAddress } from "../../src/server/Listen.js"
import { startNode } from "../../bench/support/Processes.js"
import { ChildServers, ChildServersLive } from "./ChildServers.js"
import { FakeConsole } from "./FakeConsole.js"

/**
 * The prober's own thread: every 25 ms it asks both servers for `/healthz` at the same instant, each over a kept-alive
 * connection of its own, and records, for each, the answer's time, how long the server's main thread ran on a core
 * meanwhile and how long it waited for one it was ready to run on (`/proc/<pid>/task/<pid>/schedstat`, Linux; null
 * where it cannot be read). The server's counters are read right before the request is written to the socket, in the
 * same synchronous step (a plain socket, not an HTTP client that writes a tick later), so the window never holds the
 * server's work from before the request could reach it, and again as soon as the answer is whole (its headers and
 * `Content-Length` bytes, or its last chunk). On a message it posts the samples and stops. Its event loop does
 * nothing else, so a busy test thread (generating and checking the hostile requests) never delays the timing.
 */
const ProberSource = `
const { parentPort, workerData } = require("node:worker_threads")
const { readFileSync } = require("node:fs")
const net = require("node:net")
const schedstat = (pid) => {
  try {
    const [ran, waited] = readFileSync("/proc/" + pid + "/task/" + pid + "/schedstat", "utf8").split(" ")
    return { ran: Number(ran) / 1e6, waited: Number(waited) / 1e6 }
  } catch {
    return null
  }
}
/** Whether an answer's text is whole: its header block, then its Content-Length bytes or its last chunk. */
const whole = (text) => {
  const head = text.indexOf("\\r\\n\\r\\n")
  if (head < 0) return false
  const length = /\\r\\ncontent-length: *(\\d+)/i.exec(text.slice(0, head))
  return length !== null ? text.length >= head + 4 + Number(length[1]) : text.endsWith("\\r\\n0\\r\\n\\r\\n")
}
const sockets = new Map()
const connected = (url) => {
  const known = sockets.get(url)
  if (known !== undefined && !known.destroyed) return known
  const { hostname, port } = new URL(url)
  const socket = net.connect({ host: hostname, port: Number(port), noDelay: true })
  socket.ready = new Promise((resolve, reject) => {
    socket.once("connect", resolve)
    socket.once("error", reject)
  })
  // An error on an open connection closes it, and the probe under way answers to the close.
  socket.on("error", () => {})
  sockets.set(url, socket)
  return socket
}
// A probe under way when the prober stops ends as its socket is destroyed: it no longer counts. A kept-alive
// connection the server closed before anything was answered is opened again and the probe sent again (a server that
// is down fails it).
let stopped = false
const timed = async (target) => {
  const { url, pid } = target
  const socket = connected(url)
  await socket.ready
  return new Promise((resolve, reject) => {
    let text = ""
    let started = 0
    let before = null
    const done = () => {
      socket.off("data", onData)
      socket.off("close", onClose)
    }
    const onData = (chunk) => {
      text += chunk.toString("latin1")
      if (!whole(text)) return
      const ms = performance.now() - started
      const after = schedstat(pid)
      done()
      const known = before !== null && after !== null
      resolve({ ms, ran: known ? after.ran - before.ran : null, queued: known ? after.waited - before.waited : 0 })
    }
    const onClose = () => {
      done()
      if (stopped) resolve(null)
      else if (text === "") timed(target).then(resolve, reject)
      else reject(new Error(url + " closed the connection mid-answer"))
    }
    socket.on("data", onData)
    socket.once("close", onClose)
    before = schedstat(pid)
    started = performance.now()
    socket.write("GET " + new URL(url).pathname + " HTTP/1.1\\r\\nhost: " + new URL(url).host + "\\r\\n\\r\\n")
  })
}
const samples = []
const tick = async () => {
  if (stopped) return
  const due = performance.now() + 25
  samples.push(await Promise.all(workerData.targets.map(timed)))
  setTimeout(tick, Math.max(0, due - performance.now()))
}
parentPort.once("message", () => {
  stopped = true
  for (const socket of sockets.values()) socket.destroy()
  parentPort.postMessage(samples)
})
tick()
`

interface Probe {
  readonly ms: number
  /** The server's main thread's time on a core meanwhile (null where it cannot be read). */
  readonly ran: number | null
  readonly queued: number
}

/**
 * Polls `/healthz` every 25 ms while `during` runs, and at the same instant a bare `node:http` server in its own
 * process (bench/upstream.ts), from a worker thread of its own. What the service's own work added to an answer is
 * the time its main thread (its event loop) ran on a core while that answer was outstanding: an upper bound of the
 * loop's work ahead of the probe, which waits for a core, the network stack and the prober do not stretch (where the
 * kernel does not say, the answer's time less its wait for a core and less the bare server's). Returns the
 * largest of those, the slowest answers, the service's longest wait for a core and the count.
 */
export const probeHealth = <A, E, R>(during: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const address = yield* ServerAddress
    const [service] = yield* ChildServers
    const control = yield* Effect.acquireRelease(
      Effect.promise(() => startNode("bench/upstream.ts", {})),
      (child) => Effect.promise(child.stop)
    )
    const prober = yield* Effect.acquireRelease(
      Effect.sync(() =>
        new Worker(ProberSource, {
          eval: true,
          workerData: {
            targets: [
              { url: `${address.url}/healthz`, pid: service!.process.pid },
              { url: `${control.url}/healthz`, pid: control.process.pid }
            ]
          }
        })
      ),
      (worker) => Effect.promise(() => worker.terminate())
    )
    const failed = new Promise<never>((_, reject) => prober.once("error", reject))
    const result = yield* during
    const samples = yield* Effect.promise(() =>
      Promise.race([
        failed,
        new Promise<Array<readonly [Probe, Probe]>>((resolve) => {
          prober.once("message", resolve)
          prober.postMessage("stop")
        })
      ])
    )
    const own = (probe: Probe) => probe.ms - probe.queued
    return {
      result,
      added: Math.max(...samples.map(([service, bare]) => service.ran ?? own(service) - own(bare))),
      slowest: Math.max(...samples.map(([service]) => service.ms)),
      slowestBare: Math.max(...samples.map(([, bare]) => bare.ms)),
      queued: Math.max(...samples.map(([service]) => service.queued)),
      probes: samples.length
    }
  })

/** The service in its own process (so `/healthz` measures its event loop alone), trusting the fake console's keys. */
export const ProbedServiceLive = Layer.unwrap(
  Effect.map(FakeConsole, (console) =>
    ChildServersLive({
      env: {
        CONSOLE_JWKS_URL: console.jwksUrl,
        CONSOLE_JWT_ISSUER: console.issuer,
        CONSOLE_JWT_AUDIENCE: console.audience
      }
    }))
).pipe(Layer.provideMerge(FakeConsole.layer))
