/**
 * The upstream client (src/providers/HttpPost.ts) against real servers on loopback speaking raw HTTP/1.1: what it
 * sends, how it reads content-length and chunked answers, keep-alive reuse, a connection that closes after its
 * answer, the 8 MiB cut-off, the attempt's timer, interruption, and failures to connect.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber } from "effect"
import { type AddressInfo, createServer, type Server, type Socket } from "node:net"
import {
  closeEndpoint,
  type Endpoint,
  MAX_RESPONSE_BYTES,
  openEndpoint,
  post,
  type PostFailure,
  type PostResponse
} from "../../src/providers/HttpPost.js"

/** `post` as an Effect, as the provider's attempt runs it: interrupting it ends the request. */
const postJson = (endpoint: Endpoint, body: string, timeoutMs: number): Effect.Effect<PostResponse, PostFailure> =>
  Effect.callback<PostResponse, PostFailure>((resume) => {
    const abort = post(endpoint, body, timeoutMs, (result) =>
      resume(result._tag === "Response" ? Effect.succeed(result.response) : Effect.fail(result)))
    return Effect.sync(abort)
  })

/** What a raw server saw: each request's head and body, and each connection it accepted and saw closed. */
interface Seen {
  readonly requests: Array<{ readonly head: string; readonly body: string }>
  connections: number
  closed: number
}

/**
 * A server answering each request on a connection with `answer(index, socket)` (index counts every request it got);
 * a request is complete once its `content-length` bytes arrived.
 */
const rawServer = (answer: (index: number, socket: Socket) => void) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly server: Server; readonly url: URL; readonly seen: Seen }>((resume) => {
      const seen: Seen = { requests: [], connections: 0, closed: 0 }
      const server = createServer((socket) => {
        seen.connections += 1
        socket.on("close", () => (seen.closed += 1))
        socket.on("error", () => undefined)
        let buffered = Buffer.alloc(0)
        socket.on("data", (chunk: Buffer) => {
          buffered = Buffer.concat([buffered, chunk])
          for (;;) {
            const end = buffered.indexOf("\r\n\r\n")
            if (end < 0) return
            const head = buffered.subarray(0, end).toString("latin1")
            const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0)
            if (buffered.length < end + 4 + length) return
            const body = buffered.subarray(end + 4, end + 4 + length).toString("utf8")
            buffered = buffered.subarray(end + 4 + length)
            seen.requests.push({ head, body })
            answer(seen.requests.length - 1, socket)
          }
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ server, url: new URL(`http://127.0.0.1:${port}/v1/chat/completions?x=1`), seen }))
      })
    }),
    ({ server }) => Effect.callback<void>((resume) => {
      server.close(() => resume(Effect.void))
    })
  )

const endpointFor = (url: URL) =>
  Effect.acquireRelease(
    Effect.sync(() => openEndpoint(url, { accept: "application/json", authorization: "Bearer sk-test" })),
    (endpoint: Endpoint) => Effect.promise(() => closeEndpoint(endpoint))
  )

const ok = (body: string, extra = "") =>
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`

const eventually = (check: () => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200 && !check(); i++) yield* Effect.sleep("10 millis")
    return check()
  })

describe("HttpPost: the upstream client", () => {
  it.live("sends the prepared headers and the body, reads the answer and its headers, and reuses connections", () =>
    Effect.gen(function*() {
      const { seen, url } = yield* rawServer((index, socket) =>
        socket.write(ok(`{"n":${index}}`, `x-request-id: req-${index}\r\nretry-after: 7\r\n`))
      )
      const endpoint = yield* endpointFor(url)
      const first = yield* postJson(endpoint, `{"question":"é"}`, 5_000)
      const later = yield* Effect.forEach([1, 2, 3, 4, 5], () => postJson(endpoint, "{}", 5_000))
      assert.deepStrictEqual(first, { status: 200, body: `{"n":0}`, requestId: "req-0", retryAfter: "7" })
      assert.deepStrictEqual(later.map((response) => response.body), [1, 2, 3, 4, 5].map((n) => `{"n":${n}}`))
      // A call made as the last one's answer ends finds that connection still finishing it and takes a second one;
      // after that the two are reused.
      assert.isAtMost(seen.connections, 2, "six calls one after another share keep-alive connections")
      const head = seen.requests[0]!.head
      assert.match(head, /^POST \/v1\/chat\/completions\?x=1 HTTP\/1\.1\r\n/)
      assert.match(head, /\r\nauthorization: Bearer sk-test(\r\n|$)/i)
      assert.match(head, /\r\ncontent-type: application\/json(\r\n|$)/i)
      assert.match(head, /\r\ncontent-length: 17(\r\n|$)/i, "UTF-8 bytes, not characters")
      assert.strictEqual(seen.requests[0]!.body, `{"question":"é"}`)
    }))

  it.live("reads a chunked answer, and an answer whose connection closes after it", () =>
    Effect.gen(function*() {
      const { seen, url } = yield* rawServer((index, socket) => {
        if (index === 0) {
          socket.write("HTTP/1.1 503 Service Unavailable\r\ntransfer-encoding: chunked\r\n\r\n")
          socket.write("5\r\n{\"a\":\r\n")
          setTimeout(() => socket.write("2\r\n1}\r\n0\r\n\r\n"), 20)
        } else {
          socket.end(ok("{}", "connection: close\r\n"))
        }
      })
      const endpoint = yield* endpointFor(url)
      const chunked = yield* postJson(endpoint, "{}", 5_000)
      assert.deepStrictEqual(chunked, { status: 503, body: `{"a":1}`, requestId: null, retryAfter: null })
      const closing = yield* postJson(endpoint, "{}", 5_000)
      assert.strictEqual(closing.body, "{}")
      const third = yield* Effect.result(postJson(endpoint, "{}", 5_000))
      assert.isTrue(third._tag === "Success" && third.success.body === "{}")
      assert.strictEqual(seen.connections, 2, "a new connection after the one the server closed")
    }))

  it.live("an answer over 8 MiB is cut off as too large and its connection closed", () =>
    Effect.gen(function*() {
      const { seen, url } = yield* rawServer((_, socket) => {
        socket.write(`HTTP/1.1 200 OK\r\ncontent-length: ${MAX_RESPONSE_BYTES + 1}\r\n\r\n`)
        socket.write(Buffer.alloc(MAX_RESPONSE_BYTES + 1, 0x20))
      })
      const endpoint = yield* endpointFor(url)
      const failure = yield* Effect.flip(postJson(endpoint, "{}", 10_000))
      assert.deepStrictEqual(failure, { _tag: "TooLarge" })
      assert.isTrue(yield* eventually(() => seen.closed === 1), "the connection is closed")
    }))

  it.live("no answer within the timeout: Timeout, and the connection is closed", () =>
    Effect.gen(function*() {
      const { seen, url } = yield* rawServer(() => undefined)
      const endpoint = yield* endpointFor(url)
      const started = Date.now()
      const failure = yield* Effect.flip(postJson(endpoint, "{}", 150))
      assert.deepStrictEqual(failure, { _tag: "Timeout" })
      assert.isAtLeast(Date.now() - started, 140)
      assert.isTrue(yield* eventually(() => seen.closed === 1), "the connection is closed")
    }))

  it.live("interrupting the call closes its connection", () =>
    Effect.gen(function*() {
      const { seen, url } = yield* rawServer(() => undefined)
      const endpoint = yield* endpointFor(url)
      const fiber = yield* Effect.forkChild(postJson(endpoint, "{}", 10_000))
      assert.isTrue(yield* eventually(() => seen.requests.length === 1))
      yield* Fiber.interrupt(fiber)
      assert.isTrue(Exit.hasInterrupts(yield* Fiber.await(fiber)))
      assert.isTrue(yield* eventually(() => seen.closed === 1), "the connection is closed")
    }))

  it.live("a connection closed before the answer and a refused connection fail as connection errors", () =>
    Effect.gen(function*() {
      const { url } = yield* rawServer((_, socket) => socket.destroy())
      const endpoint = yield* endpointFor(url)
      assert.deepStrictEqual(yield* Effect.flip(postJson(endpoint, "{}", 5_000)), { _tag: "Connection", code: "ECONNRESET" })
      const { server, url: closedUrl } = yield* rawServer(() => undefined)
      yield* Effect.callback<void>((resume) => {
        server.close(() => resume(Effect.void))
      })
      const refused = yield* endpointFor(closedUrl)
      assert.deepStrictEqual(yield* Effect.flip(postJson(refused, "{}", 5_000)), { _tag: "Connection", code: "ECONNREFUSED" })
    }))
})
