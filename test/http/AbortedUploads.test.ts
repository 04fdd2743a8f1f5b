/**
 * A client that aborts its upload is a normal event (decisions.md, Precise rules): logged at debug level without a
 * stack, never at error (src/http/RequestShape.ts). Uploads cut off mid-body over raw sockets, closed or reset, on
 * POST /v1/runs, the API's other routes with a payload (router, keys, billing, the Stripe webhook) and
 * one without (a body sent to rotate), leave no error line and no stack in the logs; nothing is stored.
 */
import { connect } from "node:net"
import { assert, describe, layer } from "@effect/vitest"
import { Cause, Effect, Layer, Logger, References } from "effect"
import { SqlClient } from "effect/sql"
import { DatabaseLive } from "../../src/db/Sql.js"
import { ServerAddress } from "../../src/server/Listen.js"
import { UploadAbortedMessage } from "../../src/http/RequestShape.js"
import { HttpLive } from "../../src/Server.js"
import { freshKey } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { TestClientLive, testConfigLayer } from "../support/TestServer.js"

interface Line {
  readonly level: string
  readonly text: string
}

const lines: Array<Line> = []

const capture = Logger.make(({ cause, logLevel, message }) => {
  const words = Array.isArray(message) ? message.join(" ") : String(message)
  lines.push({ level: logLevel.toUpperCase(), text: cause.reasons.length === 0 ? words : `${words} ${Cause.pretty(cause)}` })
})

/** The service with every line captured, down to debug. */
const ServerLogging = TestClientLive.pipe(
  Layer.provideMerge(HttpLive({ host: "127.0.0.1", port: 0, bootstrap: false })),
  Layer.provideMerge(DatabaseLive),
  Layer.provideMerge(testConfigLayer({ logLevel: "Debug" })),
  Layer.provide(Logger.layer([capture])),
  Layer.provide(Layer.succeed(References.MinimumLogLevel, "Debug"))
)

/** Sends a request's headers (a body of 1,000 bytes declared) and part of its body, then closes or resets. */
const abortedUpload = (url: string, method: string, path: string, secret: string, reset: boolean) =>
  Effect.callback<void>((resume) => {
    const { hostname, port } = new URL(url)
    const socket = connect(Number(port), hostname)
    socket.on("error", () => {})
    socket.once("connect", () => {
      socket.write(
        `${method} ${path} HTTP/1.1\r\nhost: ${hostname}\r\nauthorization: Bearer ${secret}\r\n` +
          `content-type: application/json\r\nidempotency-key: ${freshKey()}\r\nstripe-signature: t=1,v1=00\r\n` +
          `content-length: 1000\r\n\r\n{"name":"`
      )
      setTimeout(() => {
        if (reset) socket.resetAndDestroy()
        else socket.destroy()
        resume(Effect.void)
      }, 150)
    })
  })

const Targets: ReadonlyArray<readonly [string, string]> = [
  ["POST", "/v1/runs"],
  ["POST", "/v1/router/select"],
  ["POST", "/v1/keys"],
  ["PUT", "/v1/billing/auto-recharge"],
  ["POST", "/billing/stripe/webhook"],
  ["POST", "/v1/keys/key_0123456789abcdef0123456789abcdef/rotate"]
]

layer(ServerLogging, { excludeTestServices: true, timeout: "60 seconds" })("aborted uploads", (it) => {
  describe("a client closing or resetting its connection mid-body", () => {
    it.effect("is logged at debug level without a stack, never at error; nothing is stored", () =>
      Effect.gen(function*() {
        const { url } = yield* ServerAddress
        const organization = yield* seedOrganization()
        const sql = yield* SqlClient.SqlClient
        const count = sql<{ runs: number; keys: number }>`SELECT
          (SELECT count(*)::int FROM runs WHERE organization_id = ${organization.organizationId}) AS runs,
          (SELECT count(*)::int FROM api_keys WHERE organization_id = ${organization.organizationId}) AS keys`
        const before = yield* count
        lines.length = 0
        for (const reset of [false, true]) {
          for (const [method, path] of Targets) {
            // Twice: the second time the key is in the process's cache.
            yield* abortedUpload(url, method, path, organization.secret, reset)
            yield* abortedUpload(url, method, path, organization.secret, reset)
          }
        }
        yield* Effect.sleep(500)
        const loud = lines.filter((line) => line.level !== "DEBUG" && line.level !== "INFO" && line.level !== "TRACE")
        assert.deepStrictEqual(loud, [], "no line above info")
        const stacks = lines.filter((line) => /\n\s+at /.test(line.text))
        assert.deepStrictEqual(stacks, [], "no stack")
        const aborted = lines.filter((line) => line.text === UploadAbortedMessage)
        assert.isAbove(aborted.length, 0, "the aborts are logged")
        assert.isTrue(aborted.every((line) => line.level === "DEBUG"), "at debug level")
        assert.deepStrictEqual(yield* count, before, "nothing is stored")
      }))
  })
})
