/**
 * One JSON POST to the upstream model service, reported through a callback: the hot path of every upstream model
 * call. It goes through a keep-alive connection pool of undici by its `dispatch` interface: the request is written
 * from a prepared header list and the answer's chunks gathered by a handler of four callbacks, with no request or
 * response object, stream or event emitter per call (docs/decisions.md, "Upstream client"). The attempt's timeout is
 * a plain timer that aborts the request; the caller can end it too. Bodies above 8 MiB are reported as too large.
 */
import { type Dispatcher, Pool } from "undici"

/** Largest response body read, in bytes; a chat completion with one token is a few kilobytes. */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024

/** Most connections kept open to the upstream (one request at a time on each: no pipelining). */
export const MAX_CONNECTIONS = 128

/** A response that arrived: its status and its body as text. */
export interface PostResponse {
  readonly status: number
  readonly body: string
  /** The upstream's `x-request-id` header, when it sent one. */
  readonly requestId: string | null
  /** The upstream's `Retry-After` header as sent (seconds or an HTTP date), when it sent one. */
  readonly retryAfter: string | null
}

/** Why no response arrived: the timer fired, the connection failed, or the body was too large. */
export type PostFailure =
  | { readonly _tag: "Timeout" }
  | { readonly _tag: "Connection"; readonly code: string }
  | { readonly _tag: "TooLarge" }

/** The connections to one upstream endpoint, and the request line and headers every POST to it sends. */
export interface Endpoint {
  readonly pool: Pool
  readonly path: string
  /** The request's headers as name, value, name, value, ...; `content-type` included, `content-length` computed. */
  readonly headers: ReadonlyArray<string>
}

/**
 * A pool of keep-alive connections to `url`'s origin (http or https) for POSTs to `url` with `headers`. No timeout
 * of undici's own applies: each attempt has its timer (`post`). An idle connection is closed after 4 s, or
 * sooner when the upstream's `Keep-Alive` header says so.
 */
export const openEndpoint = (url: URL, headers: Readonly<Record<string, string>>): Endpoint => ({
  pool: new Pool(url.origin, { connections: MAX_CONNECTIONS, pipelining: 1, headersTimeout: 0, bodyTimeout: 0 }),
  path: `${url.pathname}${url.search}`,
  headers: Object.entries({ ...headers, "content-type": "application/json" }).flat()
})

/** Closes every connection of the endpoint, failing the requests still open. */
export const closeEndpoint = (endpoint: Endpoint): Promise<void> => endpoint.pool.destroy()

/** A connection failure's code: the system's (ECONNREFUSED, ECONNRESET, ...), or undici's own. */
const errorCode = (error: unknown): string => {
  const { cause, code } = (error ?? {}) as { code?: unknown; cause?: { code?: unknown } }
  // undici words a connection closed under a request as its own socket error; the system's code is its cause, if any.
  if (code === "UND_ERR_SOCKET") return typeof cause?.code === "string" ? cause.code : "ECONNRESET"
  return typeof code === "string" ? code : "connection error"
}

const headerText = (value: string | Array<string> | undefined): string | null =>
  typeof value === "string" && value.length > 0 ? value : null

/** Why the client itself ended a request: undici reports it back as the request's error, which is then ignored. */
const Ended = new Error("ended by the caller")

/** What a POST came to: the response, or why none arrived. */
export type PostResult = { readonly _tag: "Response"; readonly response: PostResponse } | PostFailure

/**
 * POSTs `body` (JSON text) to the endpoint and reads the whole response, giving up after `timeoutMs`; calls `done`
 * once with the result. Answers a function that ends the request (`done` is then not called).
 */
export const post = (endpoint: Endpoint, body: string, timeoutMs: number, done: (result: PostResult) => void): () => void => {
  let settled = false
  let controller: Dispatcher.DispatchController | undefined
  let status = 0
  let requestId: string | null = null
  let retryAfter: string | null = null
  let size = 0
  const chunks: Array<Buffer> = []
  const finish = (result: PostResult) => {
    if (settled) return
    settled = true
    clearTimeout(timer)
    done(result)
  }
  /** Ends the request from this side (a request still queued in the pool is ended as it starts). */
  const abort = () => {
    settled = true
    clearTimeout(timer)
    controller?.abort(Ended)
  }
  const handler: Dispatcher.DispatchHandler = {
    onRequestStart: (started) => {
      controller = started
      if (settled) started.abort(Ended)
    },
    onResponseStart: (_, statusCode, headers) => {
      status = statusCode
      requestId = headerText(headers["x-request-id"])
      retryAfter = headerText(headers["retry-after"])
    },
    onResponseData: (_, chunk) => {
      size += chunk.length
      if (size > MAX_RESPONSE_BYTES) {
        finish({ _tag: "TooLarge" })
        abort()
        return
      }
      chunks.push(chunk)
    },
    onResponseEnd: () =>
      finish({
        _tag: "Response",
        response: {
          status,
          body: (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString("utf8"),
          requestId,
          retryAfter
        }
      }),
    onResponseError: (_, error) => finish({ _tag: "Connection", code: errorCode(error) })
  }
  const timer = setTimeout(() => {
    finish({ _tag: "Timeout" })
    abort()
  }, Math.max(0, timeoutMs))
  endpoint.pool.dispatch({ path: endpoint.path, method: "POST", headers: endpoint.headers as Array<string>, body }, handler)
  return abort
}
