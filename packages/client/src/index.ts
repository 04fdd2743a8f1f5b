/**
 * The official typed client of the Arbiter API, the package `@arbiter/client`: Effect's `HttpApiClient` over the
 * contract itself (the repository's `schema/Api.ts`, compiled into the package with the modules it imports), so its
 * methods, payloads, answers and errors are the service's own schemas; its only dependency is `effect`. Methods are
 * grouped as the API is (`client.runs.create`, `client.keys.list`, `client.router.select`, ...); every request
 * carries the key as a bearer credential. A refusal fails with the contract's class of its code
 * (`IdempotencyConflict`, tag `"idempotency_conflict"`, carrying the response's `request_id`) and a plain-text
 * rejection with its rejection class, so `Effect.catchTag` branches on codes; a transport failure, or an answer no
 * schema describes (an unknown path's empty 404), is an `HttpClientError`, an answer that does not decode a
 * `SchemaError`. Any `HttpClient` works: `FetchHttpClient.layer` on Node 18+ or a browser,
 * `NodeHttpClient.layerUndici` on Node.
 */
import { Config, Context, Effect, Layer, Redacted } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { Api } from "../../../schema/Api.js"

export { Api } from "../../../schema/Api.js"
export * as Errors from "../../../schema/Errors.js"
export type { CreateKeyRequest, Key, KeyWithSecret } from "../../../schema/KeysApi.js"
export type { SelectRequest } from "../../../schema/RouterApi.js"
export type { SelectResponse } from "../../../schema/RouterResponses.js"
export type { Run, RunRequest } from "../../../schema/RunsApi.js"
export type { Scope } from "../../../schema/Scope.js"

/** Where the service is and the credential to call it with. */
export interface ArbiterClientOptions {
  /** The service's base address, e.g. `http://127.0.0.1:8080` (no `/v1`). */
  readonly baseUrl: string
  /** An API key (`otsk_` + 64 hex) or a console session token. */
  readonly apiKey: string | Redacted.Redacted<string>
}

/**
 * The client's shape: `client.runs.create({ headers, payload })`, `client.keys.list()`, ... An interface, so the
 * package's declarations name it where it is used instead of spelling out every method again.
 */
export interface ArbiterClientShape extends HttpApiClient.ForApi<typeof Api> {}

/** A client of the API: one method per operation, grouped as the API is; needs an `HttpClient`. */
export const makeArbiterClient = (
  options: ArbiterClientOptions
): Effect.Effect<ArbiterClientShape, never, HttpClient.HttpClient> => {
  const credential = Redacted.isRedacted(options.apiKey) ? Redacted.value(options.apiKey) : options.apiKey
  return HttpApiClient.make(Api, {
    baseUrl: options.baseUrl,
    transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(credential))
  })
}

/** Options from `ARBITER_BASE_URL` (default `http://127.0.0.1:8080`, the service's own) and `ARBITER_API_KEY`. */
export const ArbiterClientConfig: Config.Config<ArbiterClientOptions> = Config.all({
  baseUrl: Config.String("ARBITER_BASE_URL").pipe(Config.withDefault("http://127.0.0.1:8080")),
  apiKey: Config.Redacted("ARBITER_API_KEY")
})

/** The client as a service. */
export class ArbiterClient extends Context.Service<ArbiterClient, ArbiterClientShape>()("arbiter/ArbiterClient") {
  /** A client built from options. */
  static readonly make = makeArbiterClient

  /** The client for these options. */
  static readonly layer = (options: ArbiterClientOptions): Layer.Layer<ArbiterClient, never, HttpClient.HttpClient> =>
    Layer.effect(ArbiterClient, makeArbiterClient(options))

  /** The client for {@link ArbiterClientConfig}. */
  static readonly layerConfig: Layer.Layer<ArbiterClient, Config.ConfigError, HttpClient.HttpClient> =
    Layer.effect(ArbiterClient, Effect.flatMap(ArbiterClientConfig, makeArbiterClient))
}
