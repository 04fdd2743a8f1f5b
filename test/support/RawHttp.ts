/**
 * A raw HTTP client for exact assertions on status, headers and body, including what a typed client cannot send:
 * chunked bodies, missing or odd content types, oversized payloads.
 */
import { Effect } from "effect"
import { request as httpRequest } from "node:http"

/** What came back. */
export interface RawResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string | Array<string> | undefined>>
  readonly text: string
  /** The body parsed as JSON (throws when it is not JSON). */
  readonly json: () => any
}

/** What to send. */
export interface RawRequest {
  readonly method?: string
  readonly path: string
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string | Buffer
  /** Send the body with `Transfer-Encoding: chunked` (no Content-Length). */
  readonly chunked?: boolean
}

/** Sends one request to a base URL and reads the whole answer. */
export const rawRequest = (baseUrl: string, options: RawRequest) =>
  Effect.callback<RawResponse, Error>((resume) => {
    const url = new URL(options.path, baseUrl)
    const headers: Record<string, string> = { ...options.headers }
    if (options.body !== undefined && options.chunked !== true) {
      headers["content-length"] = String(Buffer.byteLength(options.body))
    }
    const req = httpRequest(
      { method: options.method ?? "GET", host: url.hostname, port: url.port, path: url.pathname + url.search, headers },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          resume(Effect.succeed({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) }))
        })
        res.on("error", (error) => resume(Effect.fail(error)))
      }
    )
    req.on("error", (error) => resume(Effect.fail(error)))
    if (options.body !== undefined) {
      if (options.chunked === true) {
        const body = typeof options.body === "string" ? Buffer.from(options.body) : options.body
        for (let offset = 0; offset < body.length; offset += 64 * 1024) {
          req.write(body.subarray(offset, offset + 64 * 1024))
        }
      } else {
        req.write(options.body)
      }
    }
    req.end()
  })
