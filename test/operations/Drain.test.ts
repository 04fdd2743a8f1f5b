/**
 * Graceful drain on SIGTERM, on a server process (two workers on PostgreSQL: the primary forwards the signal and
 * each worker drains): runs in flight when the signal comes finish 200 and settle; `/readyz` answers 503 at once;
 * new runs sent during the drain are still served; once the listener stops accepting a new connection is refused;
 * the process exits 0 after logging each phase, leaving no run, lease or call holding credit (the ledger's audit).
 *
 * The upstream holds every model call until the test releases it, so the runs are in flight exactly when the test
 * says, however slow the machine; the drain lasts long enough (SHUTDOWN_DRAIN_MS) for the runs sent during it to
 * connect, and every wait is on an event (a log line, a request reaching the upstream) with a bound that only guards
 * a hang.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Fiber, Layer, Schedule } from "effect"
import { connect } from "node:net"
import { ChildServers, ChildServersLive } from "../support/ChildServers.js"
import { FakeUpstream } from "../support/FakeUpstream.js"
import { runCliProcess } from "../support/Cli.js"
import { grantCredit } from "../support/Invariants.js"
import { rawRequest } from "../support/RawHttp.js"
import { freshKey, oneQuestion } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { databaseMode } from "../support/TestDatabase.js"

const Workers = databaseMode() === "postgres" ? 2 : 1

const Server = Layer.unwrap(
  Effect.map(FakeUpstream, (upstream) =>
    ChildServersLive({
      env: {
        DECISION_PROVIDER: "openai",
        DECISION_PROVIDER_URL: upstream.url,
        DECISION_PROVIDER_MODEL: "judge-7b",
        DECISION_PROVIDER_MAX_RETRIES: "0",
        WORKERS: String(Workers),
        LOG_LEVEL: "info",
        ACCESS_LOG: "false",
        SHUTDOWN_DRAIN_MS: "4000",
        SHUTDOWN_TIMEOUT_MS: "60000"
      }
    }))
).pipe(Layer.provideMerge(FakeUpstream.layer))

/** Polls `check` every 50 ms until it holds (the bound only guards a hang). */
const until = (check: () => boolean, what: string) =>
  Effect.sync(check).pipe(
    Effect.repeat({ schedule: Schedule.spaced("50 millis"), until: (held) => held }),
    Effect.timeoutOrElse({ duration: "120 seconds", orElse: () => Effect.die(new Error(`timed out waiting for ${what}`)) })
  )

const occurrences = (text: string, line: string) => text.split(line).length - 1

/** Whether a new TCP connection to `url` is refused. */
const refused = (url: string) =>
  Effect.callback<boolean>((resume) => {
    const target = new URL(url)
    const socket = connect({ host: target.hostname, port: Number(target.port) })
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.succeed(false))
    })
    socket.once("error", (error: NodeJS.ErrnoException) => resume(Effect.succeed(error.code === "ECONNREFUSED")))
  })

describe("graceful drain", () => {
  layer(Server, { excludeTestServices: true, timeout: "300 seconds" })("SIGTERM during runs", (it) => {
    it.effect("in-flight and drain-time runs finish 200 and settle; then refused; exit 0, each phase logged", () =>
      Effect.gen(function*() {
        const [child] = yield* ChildServers
        const upstream = yield* FakeUpstream
        const organization = yield* seedOrganization({ billing: true })
        yield* grantCredit(organization.organizationId, 10_000_000)
        const run = () => rawRequest(child!.url, {
          method: "POST",
          path: "/v1/runs",
          headers: {
            authorization: `Bearer ${organization.secret}`,
            "content-type": "application/json",
            "idempotency-key": freshKey()
          },
          body: JSON.stringify(oneQuestion())
        })
        const send = (count: number) =>
          Effect.forkChild(Effect.all(Array.from({ length: count }, run), { concurrency: "unbounded" }))
        const reached = (count: number) => Effect.flatMap(upstream.requests, (requests) => Effect.sync(() => requests.length >= count))
        const upstreamReached = (count: number) =>
          reached(count).pipe(
            Effect.repeat({ schedule: Schedule.spaced("50 millis"), until: (held) => held }),
            Effect.timeout("120 seconds")
          )

        // Every worker serves before the signal: the child counts as started once one answers, and a worker still
        // starting when the signal comes stops without a drain of its own.
        yield* until(() => occurrences(child!.output(), "listening on http") === Workers, "every worker to listen")
        yield* upstream.hold
        const before = yield* send(4)
        yield* upstreamReached(4)
        assert.strictEqual((yield* rawRequest(child!.url, { path: "/readyz" })).status, 200)

        child!.process.kill("SIGTERM")
        yield* until(() => occurrences(child!.output(), "shutdown: draining") === Workers, "the drain to begin")
        const readyz = yield* rawRequest(child!.url, { path: "/readyz" })
        assert.strictEqual(readyz.status, 503, "unready as soon as the drain begins")
        const during = yield* send(3)
        yield* upstreamReached(7)

        yield* until(() => occurrences(child!.output(), "shutdown: stopped accepting") === Workers, "the listener to close")
        assert.isTrue(yield* refused(child!.url), "a new connection is refused once the listener has stopped accepting")

        yield* upstream.release
        const answers = [...(yield* Fiber.join(before)), ...(yield* Fiber.join(during))]
        assert.deepStrictEqual(answers.map((answer) => answer.status), [200, 200, 200, 200, 200, 200, 200], answers.map((a) => a.text).join("\n"))
        for (const answer of answers) assert.strictEqual(answer.json().state, "completed")

        const code = yield* Effect.callback<number | null>((resume) => {
          if (child!.process.exitCode !== null) return resume(Effect.succeed(child!.process.exitCode))
          child!.process.once("exit", (exitCode) => resume(Effect.succeed(exitCode)))
        })
        const output = child!.output()
        assert.strictEqual(code, 0, output)
        const phases = [
          `message="shutdown: draining;`,
          `message="shutdown: stopped accepting;`,
          `message="shutdown: every connection closed"`,
          `message="shutdown: settled;`,
          `message="shutdown: stopped"`
        ]
        if (Workers > 1) assert.include(output, `shutdown: SIGTERM; forwarding it to ${Workers} workers`)
        for (const phase of phases) {
          assert.strictEqual(occurrences(output, phase), Workers, `${phase}\n${output}`)
        }

        // The ledger's own audit, run as an operator runs it once the server is gone (on the embedded database the
        // CLI then opens the files itself): every money rule holds, and nothing holds credit or waits to be billed.
        const audit = yield* runCliProcess(["ledger", "audit", "--org", organization.organizationId])
        assert.strictEqual(audit.code, 0, audit.stderr)
        const report = audit.json()
        assert.isTrue(report.ok, audit.stdout)
        const { leases_holding, runs_holding, unbilled_calls } = report.in_flight
        assert.deepStrictEqual({ leases_holding, runs_holding, unbilled_calls }, { leases_holding: 0, runs_holding: 0, unbilled_calls: 0 })
      }), { timeout: 240_000 })
  })
})
