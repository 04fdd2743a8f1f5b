/**
 * Serves a PGlite database over the PostgreSQL wire protocol, to several connections at once. PGlite is one
 * backend session, so connections take turns, and the unit of a turn matters: a parameterized query is a sequence of
 * messages (Parse, Bind, Describe, Execute, Sync) that must run without another connection's messages in between, or
 * one connection's Bind meets another's Parse. Each turn here is a whole sequence up to its Sync (or a simple Query),
 * and a connection that leaves a transaction open keeps the turn until it ends it (a connection that closes inside
 * one is rolled back). This replaces pglite-socket's server, whose queue interleaves individual messages.
 */
import type { PGlite } from "@electric-sql/pglite"
import { createServer, type Server, type Socket } from "node:net"

const SslRequest = 80877103
const GssRequest = 80877104
const CancelRequest = 80877102

interface Turn {
  readonly connection: Connection
  readonly bytes: Uint8Array
}

class Connection {
  private buffer: Buffer = Buffer.alloc(0)
  private pending: Array<Buffer> = []
  started = false
  closed = false

  constructor(readonly socket: Socket, private readonly submit: (turn: Turn) => void) {}

  /** Frames incoming bytes into messages and submits each complete turn. */
  receive(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk])
    for (;;) {
      if (!this.started) {
        if (this.buffer.length < 8) return
        const length = this.buffer.readInt32BE(0)
        if (this.buffer.length < length) return
        const code = this.buffer.readInt32BE(4)
        const message = this.buffer.subarray(0, length)
        this.buffer = this.buffer.subarray(length)
        if (code === SslRequest || code === GssRequest) {
          this.socket.write("N")
          continue
        }
        if (code === CancelRequest) {
          this.socket.end()
          return
        }
        this.started = true
        this.submit({ connection: this, bytes: new Uint8Array(message) })
        continue
      }
      if (this.buffer.length < 5) return
      const length = 1 + this.buffer.readInt32BE(1)
      if (this.buffer.length < length) return
      const type = String.fromCharCode(this.buffer[0]!)
      const message = Buffer.from(this.buffer.subarray(0, length))
      this.buffer = this.buffer.subarray(length)
      if (type === "X") {
        this.socket.end()
        return
      }
      this.pending.push(message)
      if (type === "S" || type === "Q" || type === "H" || type === "d" || type === "c" || type === "f") {
        const bytes = Buffer.concat(this.pending)
        this.pending = []
        this.submit({ connection: this, bytes: new Uint8Array(bytes) })
      }
    }
  }
}

/** A running server. */
export interface PgliteSocketServer {
  readonly stop: () => Promise<void>
  readonly address: () => string | { readonly host: string; readonly port: number }
}

/** Serves `db` on a Unix socket path, or on host and port (0 picks one). */
export const servePglite = (
  db: PGlite,
  where: { readonly path: string } | { readonly host: string; readonly port: number }
): Promise<PgliteSocketServer> => {
  const queue: Array<Turn> = []
  const connections = new Set<Connection>()
  let owner: Connection | null = null
  let running = false

  const next = (): Turn | undefined => {
    if (owner !== null && !owner.closed) {
      const index = queue.findIndex((turn) => turn.connection === owner)
      return index === -1 ? undefined : queue.splice(index, 1)[0]
    }
    owner = null
    return queue.shift()
  }

  const drain = async () => {
    if (running) return
    running = true
    try {
      for (let turn = next(); turn !== undefined; turn = next()) {
        const { connection, bytes } = turn
        if (connection.closed) continue
        try {
          await db.runExclusive(() =>
            db.execProtocolRawStream(bytes, {
              onRawData: (data) => {
                if (!connection.closed && data.length > 0) connection.socket.write(Buffer.from(data))
              }
            })
          )
        } catch {
          connection.socket.destroy()
        }
        owner = db.isInTransaction() ? connection : null
      }
    } finally {
      running = false
    }
  }

  const release = async (connection: Connection) => {
    connection.closed = true
    connections.delete(connection)
    for (let index = queue.length - 1; index >= 0; index--) {
      if (queue[index]!.connection === connection) queue.splice(index, 1)
    }
    if (owner === connection) {
      owner = null
      if (db.isInTransaction()) await db.exec("ROLLBACK").catch(() => undefined)
    }
    void drain()
  }

  const server: Server = createServer((socket) => {
    socket.setNoDelay(true)
    const connection = new Connection(socket, (turn) => {
      queue.push(turn)
      void drain()
    })
    connections.add(connection)
    socket.on("data", (chunk: Buffer) => connection.receive(chunk))
    socket.on("error", () => socket.destroy())
    socket.on("close", () => void release(connection))
  })

  return new Promise((resolve, reject) => {
    server.once("error", reject)
    const ready = () => {
      server.off("error", reject)
      resolve({
        stop: () =>
          new Promise<void>((done) => {
            for (const connection of connections) connection.socket.destroy()
            server.close(() => done())
          }),
        address: () => {
          const address = server.address()
          return typeof address === "string" || address === null
            ? String(address)
            : { host: address.address, port: address.port }
        }
      })
    }
    if ("path" in where) server.listen(where.path, ready)
    else server.listen(where.port, where.host, ready)
  })
}
