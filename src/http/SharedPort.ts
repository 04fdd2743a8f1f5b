/**
 * How the API's port is accepted on, by `WORKERS` processes or by a process alone, and why not node:cluster's own
 * sharing.
 *
 * Since libuv 1.45 (Node 20) a listening handle accepts one connection per turn of its process's event loop (libuv
 * pull request 3696). A loaded worker turns its loop every 5 to 40 ms, so one handle takes new connections at a few
 * hundred a second at most; node:cluster's round-robin primary is no faster, as it hands a worker its next
 * connection only once the worker has acknowledged the last. Under 4x overload, with clients opening new
 * connections, the rest waited in the kernel's accept queue, unseen by the overload guard: answers came seconds
 * after their deadlines although the service answered each request it saw within a second (measured on 2026-11-24
 * with strace, one `accept4` per `epoll_pwait`, and `ss -ltn`: 1,900 connections queued, taken at 60 to 200 a
 * second).
 *
 * So the primary binds the socket once (it never listens or accepts itself) and sends it to each worker
 * `CopiesPerWorker` times over the worker's IPC channel; each copy arrives as a file descriptor of its own on the
 * same socket, which the worker listens on. Every copy accepts one connection per turn of the loop, so a worker takes
 * up to `CopiesPerWorker` new connections per turn, and every request reaches its guard promptly, which sheds what
 * the worker cannot serve in time. The kernel queues connections for the socket as before (`ListenBacklog`). A
 * worker that stops closes only its own copies; the primary's bound socket outlives it for the next one.
 *
 * A process serving alone (`WORKERS=1`, and the embedded database's one process) has no primary to send it copies,
 * and one handle took the same toll: offered 2,400 runs/s (2026-11-25, 20 ms upstream, deadline 2,000 ms), its accept
 * queue held up to 1,736 connections and 1,708 of 7,200 answers came late, none shed. So it binds the socket itself
 * and has a helper process (`node -e`, for the few milliseconds it takes) send it back `CopiesPerWorker` times, then
 * accepts on the copies like a worker (`acceptAlone`). Should the helper fail, the process listens on its one handle.
 *
 * Binding without listening uses `net._createServerHandle`, the function node:cluster itself uses for the same
 * purpose (its `SCHED_NONE` policy); test/http/SharedPort.test.ts checks it on every Node the project runs on.
 */
import { spawn } from "node:child_process"
import type { Worker } from "node:cluster"
import { lookup } from "node:dns/promises"
import type * as http from "node:http"
import * as net from "node:net"
import { getSystemErrorName } from "node:util"

/** The environment variable through which the primary tells a worker to take its copies of the socket. */
const SharedPortEnv = "ARBITER_SHARED_PORT"

/**
 * Copies of the listening socket each worker accepts on: the new connections it takes per turn of its loop. 16 were
 * too few on a slower VM with two saturated cores: offered 2,000 runs/s (two workers, deadline 2,000 ms), 16 copies
 * answered 1,813, 55, 142 and 767 of 6,000 late, 503s among them (requests the guard saw only after their deadline);
 * 64 copies answered 49, 0, 62 and 0 late, never a 503 (2026-11-25, alternating builds).
 */
const CopiesPerWorker = 64

/** The kernel's queue of connections not accepted yet (capped by net.core.somaxconn). */
export const ListenBacklog = 4_096

const AskMessage = "arbiter:listen"
const CopyMessage = "arbiter:socket"

/** An address and port. */
export interface SharedAddress {
  readonly host: string
  readonly port: number
}

const isMessage = (message: unknown, kind: string): boolean =>
  typeof message === "object" && message !== null && (message as { arbiter?: unknown }).arbiter === kind

/** Whether a worker's message asks for its copies: it has built its app and is about to serve. */
export const isAskForCopies = (message: unknown): boolean => isMessage(message, AskMessage)

/** The socket handle node:net makes for a server (its internal TCP wrap). */
export interface ServerHandle {
  getsockname(out: { address?: string; port?: number }): number
  close(): void
}

const createServerHandle = (net as unknown as {
  _createServerHandle: (address: string, port: number, addressType: number) => ServerHandle | number
})._createServerHandle

/** The primary's side: a bound socket, sent to every worker that asks. */
export interface SharedPort {
  /** The address bound (the port chosen when 0 was asked). */
  readonly address: SharedAddress
  /** The environment a worker needs to ask for its copies. */
  readonly workerEnv: Readonly<Record<string, string>>
  /** Answers a worker's request for its copies. */
  readonly onMessage: (worker: Worker, message: unknown) => void
  /** Closes the primary's copy (the workers' copies close with them). */
  readonly close: () => void
}

/** Binds `host:port` (a name is looked up first), without listening on it: the handle and the address bound. */
const bindHandle = async (wanted: SharedAddress): Promise<{ readonly handle: ServerHandle; readonly address: SharedAddress }> => {
  const { address: ip, family } = await lookup(wanted.host)
  const handle = createServerHandle(ip, wanted.port, family)
  if (typeof handle === "number") {
    throw new Error(`could not bind ${wanted.host}:${wanted.port}: ${getSystemErrorName(handle)}`)
  }
  // libuv defers a bind's EADDRINUSE to the listen that follows, which happens in the workers: the socket is left
  // unbound, and listening on it would pick a random port. An unbound socket has no port, so that is told here.
  const out: { address?: string; port?: number } = {}
  handle.getsockname(out)
  if (out.port === undefined || out.port === 0) {
    handle.close()
    throw new Error(`could not bind ${wanted.host}:${wanted.port}: EADDRINUSE (another process listens on it)`)
  }
  return { handle, address: { host: out.address ?? ip, port: out.port } }
}

/** Binds `host:port` (a name is looked up first), without listening on it, for workers to ask for copies of. */
export const bindSharedPort = async (wanted: SharedAddress): Promise<SharedPort> => {
  const { address, handle } = await bindHandle(wanted)
  return {
    address,
    workerEnv: { [SharedPortEnv]: JSON.stringify(address) },
    onMessage: (worker, message) => {
      if (!isMessage(message, AskMessage)) return
      // A raw handle travels as Node's `net.Native`; each arrives as a descriptor of its own on the same socket.
      for (let index = 0; index < CopiesPerWorker; index++) worker.send({ arbiter: CopyMessage }, handle as never)
    },
    close: () => handle.close()
  }
}

/** The address the primary bound for this worker, when it did (else the process listens itself). */
export const sharedAddress = (env: NodeJS.ProcessEnv = process.env): SharedAddress | undefined => {
  const text = env[SharedPortEnv]
  if (text === undefined || text === "" || process.send === undefined) return undefined
  const parsed = JSON.parse(text) as SharedAddress
  return { host: parsed.host, port: parsed.port }
}

/** Stops accepting, then calls back once every connection taken has closed. */
export type StopAccepting = (drained: () => void) => void

/** Where copies of the socket come from: asks for them, then hands each to `onCopy`, or a failure to `onError`. */
export type CopySource = (onCopy: (handle: unknown) => void, onError: (error: Error) => void) => void

/** A worker's copies: asked of the primary over the worker's IPC channel. */
const fromPrimary: CopySource = (onCopy) => {
  let received = 0
  const onMessage = (message: unknown, handle: unknown) => {
    if (!isMessage(message, CopyMessage) || handle === undefined) return
    received++
    if (received === CopiesPerWorker) process.off("message", onMessage)
    onCopy(handle)
  }
  process.on("message", onMessage)
  process.send!({ arbiter: AskMessage })
}

/**
 * The helper of a process serving alone: it sends back `copies` times the socket it is sent, and exits once the
 * process disconnects (it keeps a message listener until then: without one, its IPC channel no longer holds it, and it
 * would exit before its copies were delivered).
 */
const HelperScript =
  `process.on("message", (message, handle) => { for (let i = 0; i < message.copies; i++) process.send(` +
  `{ arbiter: ${JSON.stringify(CopyMessage)} }, handle) })`

/** How long a lone process waits for its helper's copies before it listens on its one handle instead. */
const HelperTimeoutMs = 10_000

/** A lone process's copies of `handle`, sent back by a helper process (`HelperScript`). */
const fromHelper = (handle: ServerHandle): CopySource => (onCopy, onError) => {
  const helper = spawn(process.execPath, ["-e", HelperScript], { env: {}, stdio: ["ignore", "ignore", "inherit", "ipc"] })
  let received = 0
  const timer = setTimeout(() => fail(new Error(`no copies of the socket within ${HelperTimeoutMs} ms`)), HelperTimeoutMs)
  // Done with the helper: its later events are of no interest, but an `error` with no listener would throw.
  const done = () => {
    clearTimeout(timer)
    helper.removeAllListeners()
    helper.on("error", () => {})
  }
  const fail = (error: Error) => {
    done()
    helper.kill()
    onError(error)
  }
  helper.on("message", (message: unknown, copy: unknown) => {
    if (!isMessage(message, CopyMessage) || copy === undefined) return
    received++
    if (received === CopiesPerWorker) {
      done()
      helper.disconnect()
    }
    onCopy(copy)
  })
  helper.once("error", fail)
  helper.once("exit", (code) => fail(new Error(`the helper exited (${code}) after ${received} copies of the socket`)))
  helper.send({ copies: CopiesPerWorker }, handle as never)
}

/**
 * The worker's side: asks the primary for its copies of the socket and accepts on each, serving every connection on
 * `server`. The server listens on the first copy itself (so node:http tracks its connections, closes idle ones and
 * enforces its request timeouts, as for any listening server); the others hand theirs to it as `connection` events.
 * Resolves once every copy listens; the returned function stops them all and calls back once every connection has
 * closed (the server's own close would wait only for those it accepted itself). Rejects, every copy closed, when a
 * copy cannot listen or the copies do not come. `source` and `count` say where the copies come from and how many.
 */
export const acceptOnCopies = (
  server: http.Server,
  port: number,
  source: CopySource = fromPrimary,
  count = CopiesPerWorker
): Promise<StopAccepting> =>
  new Promise((resolve, reject) => {
    const copies: Array<net.Server> = []
    let listening = 0
    let open = 0
    let drained: (() => void) | undefined
    server.on("connection", (socket: net.Socket) => {
      open++
      socket.once("close", () => {
        open--
        if (open === 0) drained?.()
      })
    })
    const stop: StopAccepting = (callback) => {
      for (const copy of copies) copy.close()
      server.close()
      drained = callback
      if (open === 0) callback()
    }
    const listened = () => {
      listening++
      if (listening === count) resolve(stop)
    }
    let received = 0
    let failed = false
    const failWith = (error: Error) => {
      if (failed) return
      failed = true
      for (const copy of copies) copy.close()
      if (server.listening) server.close()
      reject(error)
    }
    source((handle) => {
      if (failed) return
      received++
      const first = received === 1
      // As node:http's own server does: no Nagle delay on the connections it accepts.
      const copy = first ? server : net.createServer({ noDelay: true }, (socket) => server.emit("connection", socket))
      if (!first) copies.push(copy)
      copy.once("error", failWith)
      copy.listen(handle as net.Server, ListenBacklog, () => {
        copy.off("error", failWith)
        // A copy of a socket that is not bound would have listened on a random port instead (see bindSharedPort).
        const bound = copy.address()
        if (typeof bound !== "object" || bound === null || bound.port !== port) {
          return failWith(new Error(`a copy of the shared socket listened on ${JSON.stringify(bound)}, not port ${port}`))
        }
        copy.on("error", (error) => console.error(`accepting connections failed: ${error.message}`))
        listened()
      })
    }, failWith)
  })

/** A process accepting: the address bound, how to stop, and, when it fell back to one handle, why. */
export interface Accepting {
  readonly address: SharedAddress
  readonly stop: StopAccepting
  readonly fallback?: Error | undefined
}

/**
 * Copies from `source`, gathered from now on: the source returned hands over those already come at once, then the
 * rest as they come. `abandon` closes every copy gathered and never handed over.
 */
const gathered = (source: CopySource): { readonly source: CopySource; readonly abandon: () => void } => {
  const early: Array<unknown> = []
  let failure: Error | undefined
  let handOver: { readonly onCopy: (handle: unknown) => void; readonly onError: (error: Error) => void } | undefined
  source(
    (copy) => (handOver === undefined ? early.push(copy) : handOver.onCopy(copy)),
    (error) => (handOver === undefined ? (failure = error) : handOver.onError(error))
  )
  return {
    source: (onCopy, onError) => {
      handOver = { onCopy, onError }
      for (const copy of early.splice(0)) onCopy(copy)
      if (failure !== undefined) onError(failure)
    },
    abandon: () => {
      for (const copy of early.splice(0)) (copy as ServerHandle).close()
    }
  }
}

/** A lone process's port, bound, with its copies on their way (`prepareAlone`). */
export interface PreparedAlone {
  readonly address: SharedAddress
  /** Accepts on the copies (or, if they do not come, on the one handle) with `server`. */
  readonly accept: (server: http.Server) => Promise<Accepting>
  /** Closes the socket and every copy when `accept` was never called (start-up failed before it could serve). */
  readonly abandon: () => void
}

/**
 * A process serving alone, before its server exists: binds `host:port` (0 picks a free port) and has the helper
 * process (`fromHelper`, or `copiesOf`) send the copies back while the app is built, so the helper's start costs
 * the start-up nothing.
 */
export const prepareAlone = async (
  wanted: SharedAddress,
  copiesOf: (handle: ServerHandle) => CopySource = fromHelper
): Promise<PreparedAlone> => {
  const { address, handle } = await bindHandle(wanted)
  const copies = gathered(copiesOf(handle))
  let accepted = false
  return {
    address,
    accept: async (server) => {
      accepted = true
      try {
        const stop = await acceptOnCopies(server, address.port, copies.source)
        handle.close()
        return { address, stop }
      } catch (error) {
        const stop = await acceptOnCopies(server, address.port, (onCopy) => onCopy(handle), 1)
        return { address, stop, fallback: error as Error }
      }
    },
    abandon: () => {
      if (accepted) return
      copies.abandon()
      handle.close()
    }
  }
}

/**
 * A process serving alone: binds `host:port` and accepts on copies of the socket a helper process sends back, like a
 * worker; if they do not come, on its one handle (`prepareAlone`, then its `accept`). Resolves with the address
 * bound, the function that stops accepting, and, when it fell back to one handle, why.
 */
export const acceptAlone = async (
  server: http.Server,
  wanted: SharedAddress,
  copiesOf: (handle: ServerHandle) => CopySource = fromHelper
): Promise<Accepting> => (await prepareAlone(wanted, copiesOf)).accept(server)
