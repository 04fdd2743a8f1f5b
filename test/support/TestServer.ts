/**
 * The whole service on a random port over a database of its own, for HTTP tests: the same layers `npm start` runs,
 * with settings overridden per test file. Exposes the base URL and an HttpClient that prefixes it.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { ConfigProvider, Effect, Layer, Option, References } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { AppConfig, type Settings } from "../../src/config/AppConfig.js"
import { DatabaseLive } from "../../src/db/Sql.js"
import { ServerAddress } from "../../src/server/Listen.js"
import { HttpLive } from "../../src/Server.js"

/** The direct routes a test server serves beside the router (HttpLive's `directRoutes`). */
export type DirectRoutesLayer = NonNullable<Parameters<typeof HttpLive>[0]["directRoutes"]>
import { freePort } from "../../bench/support/Processes.js"
import { FakeConsole } from "./FakeConsole.js"
import { FakeUpstream } from "./FakeUpstream.js"
import { freshDatabaseSettings } from "./TestDatabase.js"

/** Settings for a test server: no environment leaks in except what the test sets. */
export const testConfigLayer = (overrides: Partial<Settings> = {}) =>
  Layer.unwrap(
    // Load shedding is off: test files share a busy machine, and a slow moment must not shed a test's request
    // (test/server/Overload.test.ts turns it on).
    Effect.map(freshDatabaseSettings, (database) => AppConfig.layerWith({
      overloadMaxLagMs: 0,
      runsMaxInFlight: 0,
      billingProviderChosen: true,
      // A test server's connections still open when its test ends are closed after 5 s, not the production 30.
      shutdownTimeoutMs: 5_000,
      ...database,
      ...overrides
    }))
  ).pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({}))))

/** An HttpClient whose relative URLs go to the test server. */
export const TestClientLive = Layer.effect(
  HttpClient.HttpClient,
  Effect.gen(function*() {
    const address = yield* ServerAddress
    const client = yield* HttpClient.HttpClient
    return client.pipe(HttpClient.mapRequest(HttpClientRequest.prependUrl(address.url)))
  })
).pipe(Layer.provide(NodeHttpClient.layerUndici))

/** The service listening on 127.0.0.1 on a free port, with its client, over a fresh database. */
export const TestServerLive = (
  overrides: Partial<Settings> = {},
  options: { readonly bootstrap?: boolean; readonly port?: number; readonly directRoutes?: DirectRoutesLayer } = {}
) =>
  TestClientLive.pipe(
    Layer.provideMerge(HttpLive({
      host: "127.0.0.1",
      port: options.port ?? 0,
      bootstrap: options.bootstrap ?? false,
      ...(options.directRoutes === undefined ? {} : { directRoutes: options.directRoutes })
    })),
    Layer.provideMerge(DatabaseLive),
    Layer.provideMerge(testConfigLayer(overrides)),
    Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))
  )

/** The service with console sessions trusted from a FakeConsole (also provided). */
export const TestServerWithConsoleLive = (overrides: Partial<Settings> = {}) =>
  Layer.unwrap(
    Effect.map(FakeConsole, (console) =>
      TestServerLive({
        consoleJwksUrl: Option.some(console.jwksUrl),
        consoleJwtIssuer: Option.some(console.issuer),
        consoleJwtAudience: Option.some(console.audience),
        ...overrides
      }))
  ).pipe(Layer.provideMerge(FakeConsole.layer))

/** The service answering decisions through a FakeUpstream (also provided) over the OpenAI-compatible wire format. */
export const TestServerWithUpstreamLive = (
  overrides: Partial<Settings> = {},
  options: { readonly directRoutes?: DirectRoutesLayer } = {}
) =>
  Layer.unwrap(
    Effect.map(FakeUpstream, (upstream) =>
      TestServerLive({
        decisionProvider: "openai",
        decisionProviderUrl: Option.some(upstream.url),
        decisionProviderModel: Option.some("judge-7b"),
        decisionProviderMaxRetries: 2,
        decisionProviderRetryBaseMs: 5,
        ...overrides
      }, options))
  ).pipe(Layer.provideMerge(FakeUpstream.layer))

/** The service on a port chosen up front, so the pages it links to (`PUBLIC_BASE_URL`) carry the real address. */
export const TestServerOnKnownPortLive = (overrides: Partial<Settings> = {}) =>
  Layer.unwrap(
    Effect.map(Effect.promise(freePort), (port) =>
      TestServerLive({ publicBaseUrl: Option.some(`http://127.0.0.1:${port}`), ...overrides }, { port }))
  )
