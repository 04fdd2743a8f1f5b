/**
 * The listener's graceful stop (src/server/Drain.ts) on a real node:http server: once stopping, answers carry
 * `Connection: close`; the lifecycle reads stopping and gets its deadline; a new connection is refused once the
 * listener stops accepting; a request still in flight at SHUTDOWN_TIMEOUT_MS has its connection closed, with a
 * warning, and the stop completes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Agent, createServer, request } from "node:http"
import { connect } from "node:net"
import { makeLifecycle } from "../../src/health/Lifecycle.js"
import { makeDrain } from "../../src/server/Drain.js"
import { acceptOn, reservePort } from "../../src/server/SharedPort.js"

/** A keep-alive client: it asks to keep each connection open. */
const keepAlive = new Agent({ keepAlive: true })

/** A GET (asking for keep-alive) whose outcome is its status and `connection` header, or the error that ended it. */
const get = (port: number, path: string) =>
  new Promise<{ status?: number; connection?: string; error?: string }>((resolve) => {
    const req = request({ host: "127.0.0.1", port, path, agent: keepAlive }, (response) => {
      response.resume()
      response.on("end", () => resolve({ status: response.statusCode!, connection: response.headers.connection ?? "" }))
    })
    req.on("error", (error) => resolve({ error: error.message }))
    req.end()
  })

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: "127.0.0.1", port })
    socket.once("connect", () => (socket.destroy(), resolve(false)))
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"))
  })

describe("Drain", () => {
  it.live("Connection: close once stopping; refused after; a request past the timeout is closed and the stop ends", () =>
    Effect.gen(function*() {
      const lifecycle = makeLifecycle()
      let hanging!: () => void
      const arrived = new Promise<void>((resolve) => (hanging = resolve))
      const server = createServer((req, res) => {
        drain.track(req, res)
        if (req.url === "/hang") return hanging()
        res.end("ok")
      })
      const drain = makeDrain({ server, lifecycle, drainMs: 0, timeoutMs: 300 })
      const accepting = yield* Effect.promise(async () => acceptOn(server, await reservePort({ host: "127.0.0.1", port: 0 }), 1))
      const port = accepting.address.port

      const before = yield* Effect.promise(() => get(port, "/"))
      assert.deepStrictEqual(before, { status: 200, connection: "keep-alive" })

      const hung = get(port, "/hang")
      yield* Effect.promise(() => arrived)
      lifecycle.beginStopping()
      const during = yield* Effect.promise(() => get(port, "/"))
      assert.deepStrictEqual(during, { status: 200, connection: "close" }, "answers close their connection once stopping")

      const startedAt = Date.now()
      yield* drain.stop(accepting.stop)
      assert.isTrue(lifecycle.stopping())
      const deadline = lifecycle.deadline()
      assert.isDefined(deadline)
      assert.isAtLeast(deadline!, startedAt + 300)
      const cut = yield* Effect.promise(() => hung)
      assert.isDefined(cut.error, "the request still in flight at the timeout had its connection closed")
      assert.isTrue(yield* Effect.promise(() => refused(port)), "a new connection is refused")
      keepAlive.destroy()
    }))
})
