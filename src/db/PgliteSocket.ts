/**
 * Serves a PGlite database over the PostgreSQL wire protocol, to several connections at once. PGlite is one
 * backend session, so connections take turns, and the unit of a turn matters: a parameterized query is a sequence of
 * messages (Parse, Bind, Describe, Execute, Sync) that must run without another connection's messages in between, or
 * one connection's Bind meets another's Parse. Each turn here is a whole sequence up to its Sync (or a simple Query),
 * and a connection that leaves a transaction open keeps the turn until it ends it (a connection that closes inside
 * one is rolled back). This replaces pglite-socket's server, whose queue interleaves individual messages.
 *
 * Named (prepared) statements belong to the session, so every connection shares them: a connection's `Parse` of a
 * name the session already holds with the same text is answered `ParseComplete` here and not run, as if that
 * connection had prepared it itself. So the `pg` client prepares a statement once per connection as on PostgreSQL,
 * and PGlite parses and plans the ledger's statements once, not at each execution.
 */
import type { PGlite } from "@electric-sql/pglite"
import { createServer, type Server, type Socket } from "node:net"

const SslRequest = 80877103
const GssRequest = 80877104
const CancelRequest = 80877102

/** A connection's turn: its startup message, or its messages up to a `Sync` (or a simple query). */
interface Turn {
  readonly connection: Connection
  readonly startup: Uint8Array | null
  readonly messages: ReadonlyArray<Buffer>
}

/**
 * What a turn sends to the database, decided when its turn comes (not when it arrives, so two connections preparing
 * the same name at once prepare it once): its bytes, less the leading `Parse`s of statements the session holds
 * already (each answered `ParseComplete` here), and the named `Parse` leading what is sent, recorded once the
 * database answers it.
 */
interface Sending {
  readonly bytes: Uint8Array
  readonly parse: NamedParse | null
  readonly parsedAlready: number
}

interface NamedParse {
  readonly name: string
  readonly text: string
}

/** `ParseComplete`, the answer to a `Parse` that succeeded. */
const ParseComplete = Buffer.from([0x31, 0, 0, 0, 4])

/** The statement name and text of a `Parse` message (type byte, length, name, text, ...). */
const namedParseOf = (message: Buffer): NamedParse => {
  const nameEnd = message.indexOf(0, 5)
  const textEnd = message.indexOf(0, nameEnd + 1)
  return { name: message.toString("utf8", 5, nameEnd), text: message.toString("utf8", nameEnd + 1, textEnd) }
}

/** A simple query that drops prepared statements of the session (the service sends none; a tool might). */
const Deallocates = /^\s*(DEALLOCATE|DISCARD)\b/i

/** What `turn` sends, against the session's named statements now (see `Sending`). */
const sendingOf = (turn: Turn, statements: Map<string, string>): Sending => {
  if (turn.startup !== null) return { bytes: turn.startup, parse: null, parsedAlready: 0 }
  const messages = turn.messages
  let parsedAlready = 0
  let parse: NamedParse | null = null
  while (parsedAlready < messages.length && messages[parsedAlready]![0] === 0x50) {
    const named = namedParseOf(messages[parsedAlready]!)
    if (named.name === "") break
    if (statements.get(named.name) !== named.text) {
      parse = named
      break
    }
    parsedAlready++
  }
  const rest = messages.slice(parsedAlready)
  for (const message of rest) {
    const type = message[0]
    if (type === 0x43 && message[5] === 0x53) statements.delete(message.toString("utf8", 6, message.length - 1))
    if (type === 0x51 && Deallocates.test(message.toString("utf8", 5))) statements.clear()
  }
  return { bytes: new Uint8Array(Buffer.concat(rest)), parse, parsedAlready }
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
        this.submit({ connection: this, startup: new Uint8Array(message), messages: [] })
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
        const messages = this.pending
        this.pending = []
        this.submit({ connection: this, startup: null, messages })
      }
    }
  }
}

/** A running server. */
export interface PgliteSocketServer {
  readonly stop: () => Promise<void>
  readonly address: () => string | { readonly host: string; readonly port: number }
}

/**
 * The turns of every connection, run one at a time on the database: in arrival order, except that a connection
 * holding a transaction open is served alone until it ends it.
 */
class Turns {
  private readonly queue: Array<Turn> = []
  readonly connections = new Set<Connection>()
  /** The session's named statements: name to text. */
  readonly statements = new Map<string, string>()
  private owner: Connection | null = null
  private running = false

  constructor(private readonly db: PGlite) {}

  submit(turn: Turn): void {
    this.queue.push(turn)
    void this.drain()
  }

  /** Forgets a closed connection's turns and rolls back the transaction it left open. */
  async release(connection: Connection): Promise<void> {
    connection.closed = true
    this.connections.delete(connection)
    for (let index = this.queue.length - 1; index >= 0; index--) {
      if (this.queue[index]!.connection === connection) this.queue.splice(index, 1)
    }
    if (this.owner === connection) {
      this.owner = null
      if (this.db.isInTransaction()) await this.db.exec("ROLLBACK").catch(() => undefined)
    }
    void this.drain()
  }

  private next(): Turn | undefined {
    if (this.owner !== null && !this.owner.closed) {
      const owner = this.owner
      const index = this.queue.findIndex((turn) => turn.connection === owner)
      return index === -1 ? undefined : this.queue.splice(index, 1)[0]
    }
    this.owner = null
    return this.queue.shift()
  }

  private async drain(): Promise<void> {
    if (this.running) return
    this.running = true
    try {
      for (let turn = this.next(); turn !== undefined; turn = this.next()) {
        const { connection } = turn
        if (connection.closed) continue
        const { bytes, parse, parsedAlready } = sendingOf(turn, this.statements)
        for (let index = 0; index < parsedAlready; index++) connection.socket.write(ParseComplete)
        if (bytes.length === 0) continue
        // The first answer of a turn led by a Parse is that Parse's: ParseComplete, or the error that refused it.
        let first = true
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(bytes, {
              onRawData: (data) => {
                if (data.length === 0) return
                if (first && parse !== null && data[0] === ParseComplete[0]) this.statements.set(parse.name, parse.text)
                first = false
                if (!connection.closed) connection.socket.write(Buffer.from(data))
              }
            })
          )
        } catch {
          connection.socket.destroy()
        }
        this.owner = this.db.isInTransaction() ? connection : null
      }
    } finally {
      this.running = false
    }
  }
}

/** Resolves once `server` listens where asked, with the handle that stops it. */
const listening = (
  server: Server,
  turns: Turns,
  where: { readonly path: string } | { readonly host: string; readonly port: number }
): Promise<PgliteSocketServer> =>
  new Promise((resolve, reject) => {
    server.once("error", reject)
    const ready = () => {
      server.off("error", reject)
      resolve({
        stop: () =>
          new Promise<void>((done) => {
            for (const connection of turns.connections) connection.socket.destroy()
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

/** Serves `db` on a Unix socket path, or on host and port (0 picks one). */
export const servePglite = (
  db: PGlite,
  where: { readonly path: string } | { readonly host: string; readonly port: number }
): Promise<PgliteSocketServer> => {
  const turns = new Turns(db)
  const server: Server = createServer((socket) => {
    socket.setNoDelay(true)
    const connection = new Connection(socket, (turn) => turns.submit(turn))
    turns.connections.add(connection)
    socket.on("data", (chunk: Buffer) => connection.receive(chunk))
    socket.on("error", () => socket.destroy())
    socket.on("close", () => void turns.release(connection))
  })
  return listening(server, turns, where)
}
