/**
 * One JSON POST over `node:http`/`node:https` with a keep-alive agent, as an interruptible Effect: the hot path of
 * every upstream model call, so no fetch and no web streams. The attempt's timeout is a plain timer that destroys
 * the request; interrupting the Effect destroys it too. Bodies above 8 MiB are cut off and reported as too large.
 */
import * as http from "node:http"
import * as https from "node:https"
import { Effect } from "effect"

/** Largest response body read, in bytes; a chat completion with one token is a few kilobytes. */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024

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

/** Keep-alive agents for both protocols, shared by every call of one provider. */
export interface Agents {
  readonly http: http.Agent
  readonly https: https.Agent
}

/** Fresh keep-alive agents. */
export const makeAgents = (): Agents => ({
  http: new http.Agent({ keepAlive: true, maxSockets: 128 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 128 })
})

/** Closes every socket of the agents. */
export const destroyAgents = (agents: Agents): void => {
  agents.http.destroy()
  agents.https.destroy()
}

const errorCode = (error: unknown): string => {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === "string" ? code : "connection error"
}

const headerText = (value: string | Array<string> | undefined): string | null =>
  typeof value === "string" && value.length > 0 ? value : null

/** One POST: where, with which agents and headers, its JSON body, and how long it may take. */
export interface PostOptions {
  readonly agents: Agents
  readonly url: URL
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly timeoutMs: number
}

/** POSTs `body` (JSON text) to `url` and reads the whole response, giving up after `timeoutMs`. */
export const postJson = (options: PostOptions): Effect.Effect<PostResponse, PostFailure> =>
  Effect.async<PostResponse, PostFailure>((resume) => {
    let settled = false
    let timer: ReturnType<typeof setTimeout> | undefined
    const finish = (effect: Effect.Effect<PostResponse, PostFailure>) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resume(effect)
    }
    const secure = options.url.protocol === "https:"
    const request = (secure ? https.request : http.request)(options.url, {
      method: "POST",
      agent: secure ? options.agents.https : options.agents.http,
      headers: {
        ...options.headers,
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(options.body, "utf8"))
      }
    }, (response) => {
      const chunks: Array<Buffer> = []
      let size = 0
      response.on("data", (chunk: Buffer) => {
        size += chunk.length
        if (size > MAX_RESPONSE_BYTES) {
          finish(Effect.fail({ _tag: "TooLarge" }))
          request.destroy()
          return
        }
        chunks.push(chunk)
      })
      response.on("end", () =>
        finish(Effect.succeed({
          status: response.statusCode ?? 0,
          body: Buffer.concat(chunks).toString("utf8"),
          requestId: headerText(response.headers["x-request-id"]),
          retryAfter: headerText(response.headers["retry-after"])
        }))
      )
      response.on("error", (error) => finish(Effect.fail({ _tag: "Connection", code: errorCode(error) })))
      response.on("close", () => {
        if (!response.complete) finish(Effect.fail({ _tag: "Connection", code: "ECONNRESET" }))
      })
    })
    timer = setTimeout(() => {
      finish(Effect.fail({ _tag: "Timeout" }))
      request.destroy()
    }, Math.max(0, options.timeoutMs))
    request.on("error", (error) => finish(Effect.fail({ _tag: "Connection", code: errorCode(error) })))
    request.end(options.body)
    return Effect.sync(() => {
      settled = true
      clearTimeout(timer)
      request.destroy()
    })
  })
