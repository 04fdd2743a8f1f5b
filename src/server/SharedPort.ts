/**
 * How the API's port is accepted on, by `WORKERS` processes or by a process alone. A listening handle accepts one
 * connection per turn of its process's event loop, which a loaded process turns every few tens of milliseconds, so
 * under overload new connections wait in the kernel's accept queue, unseen by the overload guard, until after their
 * deadlines (node:cluster's round-robin primary is no faster: it hands a worker a connection only once the worker
 * acknowledged the last). So every serving process listens on `ListenersPerProcess` sockets of its own on the port,
 * each with `SO_REUSEPORT` (`reusePort`, Linux): the kernel spreads new connections over every socket of the port, and
 * each accepts one per turn. A worker that stops closes only its own sockets. Where `reusePort` is not supported, a
 * process alone listens on one handle, and workers through node:cluster's shared handle. `SO_REUSEPORT` would also
 * let a second service started by mistake share the port silently, so the port is first taken without it
 * (`reservePort`): a port another process listens on stops the start with EADDRINUSE.
 */
import type * as http from "node:http"
import * as net from "node:net"

/** The environment variable through which the primary tells a worker the port to listen on. */
const SharedPortEnv = "ARBITER_SHARED_PORT"

/** Sockets each serving process listens on: the new connections it takes per turn of its loop. */
const ListenersPerProcess = 64

/** The kernel's queue of connections not accepted yet, per socket (capped by net.core.somaxconn). */
const ListenBacklog = 4_096

/** Whether the platform spreads connections over `reusePort` sockets (Linux 3.9 and later). */
const reusePortWorks = process.platform === "linux"

const ListeningMessage = "arbiter:listening"

export interface SharedAddress {
  readonly host: string
  readonly port: number
}

/** Whether a worker's message says it listens: it has built its app and serves. */
export const isListeningMessage = (message: unknown): boolean =>
  typeof message === "object" && message !== null && (message as { arbiter?: unknown }).arbiter === ListeningMessage

/** Tells the primary, when there is one, that this worker listens. */
export const announceListening = (): void => {
  if (process.send !== undefined) process.send({ arbiter: ListeningMessage })
}

const listenOnce = (server: net.Server, options: net.ListenOptions): Promise<SharedAddress> =>
  new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen({ ...options, backlog: ListenBacklog }, () => {
      server.off("error", reject)
      const bound = server.address() as net.AddressInfo
      resolve({ host: bound.address, port: bound.port })
    })
  })

/**
 * Takes `host:port` once without `SO_REUSEPORT` (0 picks a free port) and lets go of it: the address the serving
 * sockets then listen on. Fails, naming the address, when another process listens there. A port chosen here could be
 * taken by another process before the serving sockets listen on it; their start then fails with EADDRINUSE.
 */
export const reservePort = async (wanted: SharedAddress): Promise<SharedAddress> => {
  const probe = net.createServer()
  try {
    return await listenOnce(probe, { host: wanted.host, port: wanted.port, exclusive: true })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message
    throw new Error(`could not bind ${wanted.host}:${wanted.port}: ${code}${code === "EADDRINUSE" ? " (another process listens on it)" : ""}`)
  } finally {
    if (probe.listening) await new Promise((closed) => probe.close(closed))
  }
}

/** The environment a worker needs to listen on the primary's port. */
export const workerEnv = (address: SharedAddress): Readonly<Record<string, string>> => ({
  [SharedPortEnv]: JSON.stringify(address)
})

/** The address the primary reserved for this worker, when it did (else the process serves alone). */
export const sharedAddress = (env: NodeJS.ProcessEnv = process.env): SharedAddress | undefined => {
  const text = env[SharedPortEnv]
  if (text === undefined || text === "" || process.send === undefined) return undefined
  const parsed = JSON.parse(text) as SharedAddress
  return { host: parsed.host, port: parsed.port }
}

/** Stops accepting, then calls back once every connection taken has closed. */
export type StopAccepting = (drained: () => void) => void

/**
 * Listens on `address` with `server` and, where `SO_REUSEPORT` spreads connections, on `count - 1` more sockets of
 * the same port that hand each connection to it. The server listens itself (so node:http tracks its connections,
 * closes idle ones and enforces its request timeouts, as for any listening server); the others emit `connection` on
 * it. The returned `stop` closes every socket and calls back once every connection has closed (the server's own close
 * would wait only for those it accepted itself). Rejects, every socket closed, when one cannot listen.
 */
export const acceptOn = async (
  server: http.Server,
  address: SharedAddress,
  count = ListenersPerProcess
): Promise<{ readonly address: SharedAddress; readonly stop: StopAccepting }> => {
  const others: Array<net.Server> = []
  let open = 0
  let drained: (() => void) | undefined
  server.on("connection", (socket: net.Socket) => {
    open++
    socket.once("close", () => {
      open--
      if (open === 0) drained?.()
    })
  })
  const closeAll = () => {
    for (const other of others) other.close()
    if (server.listening) server.close()
  }
  try {
    const bound = await listenOnce(server, { host: address.host, port: address.port, reusePort: reusePortWorks })
    for (let index = 1; reusePortWorks && index < count; index++) {
      // As node:http's own server does: no Nagle delay on the connections it accepts.
      const other = net.createServer({ noDelay: true }, (socket) => server.emit("connection", socket))
      others.push(other)
      await listenOnce(other, { host: bound.host, port: bound.port, reusePort: true })
      other.on("error", (error) => console.error(`accepting connections failed: ${error.message}`))
    }
    const stop: StopAccepting = (callback) => {
      closeAll()
      drained = callback
      if (open === 0) callback()
    }
    return { address: bound, stop }
  } catch (error) {
    closeAll()
    throw error
  }
}
