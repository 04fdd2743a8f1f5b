/**
 * A download a test can hold after its first bytes (the socket stops being read, so the server's writes back up),
 * then resume: for showing that a response is streamed, and what a client sees when a stream breaks.
 */
import { request } from "node:http"

/** The status and headers, once the first bytes of the body have come. */
export interface FirstBytes {
  readonly status: number
  readonly headers: Record<string, unknown>
}

/** A held download. */
export interface Download {
  readonly firstBytes: Promise<FirstBytes>
  readonly resume: () => void
  /** The whole body and the number of pieces it came in; rejects when the connection breaks before its end. */
  readonly done: Promise<{ readonly text: string; readonly chunks: number }>
}

/** GETs `path` with a bearer credential and holds the response at its first bytes until `resume`. */
export const startDownload = (baseUrl: string, path: string, secret: string): Download => {
  let resume = () => {}
  let first: (value: FirstBytes) => void = () => {}
  const firstBytes = new Promise<FirstBytes>((resolve) => first = resolve)
  const done = new Promise<{ text: string; chunks: number }>((resolve, reject) => {
    const url = new URL(path, baseUrl)
    const options = { host: url.hostname, port: url.port, path: url.pathname + url.search, headers: { authorization: `Bearer ${secret}` } }
    const req = request(options, (res) => {
      const chunks: Array<Buffer> = []
      resume = () => res.resume()
      res.on("data", (chunk: Buffer) => {
        if (chunks.length === 0) {
          res.pause()
          first({ status: res.statusCode ?? 0, headers: res.headers })
        }
        chunks.push(chunk)
      })
      res.on("end", () => resolve({ text: Buffer.concat(chunks).toString("utf8"), chunks: chunks.length }))
      res.on("error", reject)
      res.on("close", () => {
        if (!res.complete) reject(new Error("the connection closed before the end of the body"))
      })
    })
    req.on("error", reject)
    req.end()
  })
  return { firstBytes, resume: () => resume(), done }
}
