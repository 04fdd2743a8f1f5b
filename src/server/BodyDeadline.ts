/**
 * Slow clients (decisions.md, Precise rules): a request's body must arrive within `REQUEST_BODY_TIMEOUT_MS` of its
 * headers. Past it, a request not yet answered gets a plain-text `408` with `Connection: close`; one already answered
 * (a refusal from its headers) has its connection closed. Nothing is stored or charged: a run starts only once its body
 * has been read, and the body's readers take the closed connection for a client gone (RequestShape.ts). The deadline
 * is the service's own, below Node's `requestTimeout`.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { requestIdFor } from "../http/RequestId.js"
import { hasBody } from "../http/RequestShape.js"

/** Answers the request whose body is late (or closes its connection when it was already answered). */
const expire = (request: IncomingMessage, response: ServerResponse, timeoutMs: number): void => {
  if (response.headersSent) {
    request.socket.destroy()
    return
  }
  const body = `the request body did not arrive within ${timeoutMs} ms of its headers; nothing was stored or charged`
  response.writeHead(408, {
    "content-type": "text/plain; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    "x-request-id": requestIdFor(request.headers["x-request-id"]),
    connection: "close"
  })
  // `Connection: close` makes Node end the socket once the answer is written; the rest of the body is not awaited.
  response.end(body)
}

/** Starts the body's deadline for a request with a body; it ends when the body has arrived or the connection closes. */
export const watchBodyDeadline = (request: IncomingMessage, response: ServerResponse, timeoutMs: number): void => {
  if (!hasBody(request.headers) || request.complete) return
  const timer = setTimeout(() => expire(request, response, timeoutMs), timeoutMs)
  timer.unref()
  const clear = () => clearTimeout(timer)
  request.once("end", clear)
  response.once("close", () => {
    // An answer written before the body arrived keeps the deadline: the connection stays until the rest is read.
    if (request.complete || request.destroyed) clear()
  })
}
