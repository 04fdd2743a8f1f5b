/**
 * Raw calls to the test server with a credential: `call("POST", "/v1/keys", { secret, body })` answers status,
 * headers and body exactly as sent, for assertions on codes, messages and `x-request-id`.
 */
import { Effect } from "effect"
import { ServerAddress } from "../../src/server/Listen.js"
import { rawRequest, type RawResponse } from "./RawHttp.js"

/** Options of one call. */
export interface CallOptions {
  readonly secret?: string
  readonly body?: unknown
  readonly rawBody?: string
  readonly headers?: Record<string, string>
}

/** Sends one request with `Authorization: Bearer <secret>` (when given) and a JSON body (when given). */
export const call = (method: string, path: string, options: CallOptions = {}): Effect.Effect<RawResponse, Error, ServerAddress> =>
  Effect.flatMap(ServerAddress, (address) =>
    rawRequest(address.url, {
      method,
      path,
      headers: {
        ...(options.secret === undefined ? {} : { authorization: `Bearer ${options.secret}` }),
        ...(options.body === undefined && options.rawBody === undefined ? {} : { "content-type": "application/json" }),
        ...options.headers
      },
      ...(options.rawBody !== undefined
        ? { body: options.rawBody }
        : options.body === undefined
        ? {}
        : { body: JSON.stringify(options.body) })
    }))

/** The `error.code` of a JSON error response (undefined for other bodies). */
export const codeOf = (response: RawResponse): string | undefined => {
  try {
    return response.json()?.error?.code
  } catch {
    return undefined
  }
}
