/**
 * Load shedding (src/server/Overload.ts): while the event loop lags past OVERLOAD_MAX_LAG_MS, a new POST /v1/runs is
 * answered at once with 503 no_route_available and Retry-After (request id, Server-Timing, nothing stored); other
 * routes are served; once the loop keeps up again, runs are taken as usual. Past the adaptive limit (at most
 * RUNS_MAX_IN_FLIGHT) of runs and selections being served, further ones are shed the same way; requests waiting on
 * the upstream model do not count against the limit, which shrinks once requests take longer than RUNS_TIME_BUDGET_MS
 * (after a fresh process's warm-up). The limit's own model tests are in ConcurrencyLimit.test.ts.
 */
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import * as SqlClient from "effect/sql/SqlClient"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { DefaultLimitOptions } from "../../src/server/ConcurrencyLimit.js"
import { makeCors } from "../../src/http/Cors.js"
import { ShedMessage } from "../../src/http/ShedOnceRead.js"
import { startOverloadGuard } from "../../src/server/Overload.js"
import { enterUpstream, leaveUpstream, waitingOnUpstream } from "../../src/providers/UpstreamWaits.js"
import { call, codeOf } from "../support/Api.js"
import { startGuardedServer } from "../support/GuardedServer.js"
import { freshKey, oneQuestion, postRun } from "../support/Runs.js"
import { seedOrganization } from "../support/Seed.js"
import { TestServerLive } from "../support/TestServer.js"

/** Keeps the event loop busy, as a saturated process would. */
const blockEventLoop = (ms: number) =>
  Effect.sync(() => {
    const until = performance.now() + ms
    while (performance.now() < until) {
      // busy
    }
  })

layer(TestServerLive({ overloadMaxLagMs: 50 }), { excludeTestServices: true, timeout: "60 seconds" })("overload", (it) => {
  it.effect("a lagging event loop sheds new runs with 503 no_route_available and Retry-After, stores nothing; the rest is served", () =>
    Effect.gen(function*() {
      const organization = yield* seedOrganization()
      // The loop stays stalled, 300 ms at a time with brief gaps to serve I/O, while the run is sent and read: the
      // guard sees the lag however slow the machine (a busier machine only lengthens the stalls). A single stall
      // before the request would be forgotten (the lag decays) if the machine delayed the request past it.
      const shed = yield* Effect.acquireUseRelease(
        Effect.sync(() => setInterval(() => Effect.runSync(blockEventLoop(300)), 1)),
        () => postRun(organization.secret, oneQuestion(), freshKey(), { headers: { "x-request-id": "shed-1" } }),
        (stall) => Effect.sync(() => clearInterval(stall))
      )
      assert.strictEqual(shed.status, 503)
      assert.strictEqual(codeOf(shed), "no_route_available")
      assert.strictEqual(shed.headers["retry-after"], "1")
      assert.deepStrictEqual(shed.json().error, { code: "no_route_available", message: ShedMessage, request_id: "shed-1" })
      assert.strictEqual(shed.headers["x-request-id"], "shed-1")
      assert.match(String(shed.headers["server-timing"]), /total;dur=/)
      const list = yield* call("GET", "/v1/runs", { secret: organization.secret })
      assert.strictEqual(list.status, 200, "routes that do not run the model are never shed")

      const sql = yield* SqlClient.SqlClient
      const [stored] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM runs WHERE organization_id = ${organization.organizationId}`
      assert.strictEqual(stored!.n, 0, "a shed run stores nothing")

      // A machine busy elsewhere may still lag the loop now and then: retried until a run is taken (the test's
      // timeout bounds the wait).
      const taken = yield* Effect.retry(
        Effect.andThen(Effect.sleep(100), postRun(organization.secret, oneQuestion())).pipe(
          Effect.filterOrFail((response) => response.status !== 503)
        ),
        { schedule: Schedule.forever }
      )
      assert.strictEqual(taken.status, 200, `once the loop keeps up, runs are taken: ${taken.text}`)
    }))
})

describe("the in-flight limit (RUNS_MAX_IN_FLIGHT)", () => {
  it("sheds runs and selections beyond the limit, counts a request until its response closes, never sheds other routes", async () => {
    const { held, base, heldMoreThan, close } = await startGuardedServer(1)
    const send = (method: string, path: string, requestId: string) =>
      fetch(`${base}${path}`, { method, headers: { "x-request-id": requestId }, ...(method === "POST" ? { body: "{}" } : {}) })
    try {
      const first = send("POST", "/v1/runs", "held-1")
      await heldMoreThan(0)
      for (const path of ["/v1/runs", "/v1/router/select"]) {
        const shed = await send("POST", path, "over-1")
        assert.strictEqual(shed.status, 503, path)
        assert.strictEqual(shed.headers.get("retry-after"), "1", path)
        assert.strictEqual(shed.headers.get("x-request-id"), "over-1", path)
        assert.match(String(shed.headers.get("server-timing")), /admit;dur=0\.000, upstream;dur=0\.000, gateway;dur=/)
        assert.deepStrictEqual(await shed.json(), { error: { code: "no_route_available", message: ShedMessage, request_id: "over-1" } })
      }
      const other = send("GET", "/v1/runs", "list-1")
      await heldMoreThan(1)
      held.splice(0).forEach((response) => response.end("ok"))
      assert.strictEqual((await first).status, 200)
      assert.strictEqual((await other).status, 200, "a route that does not run the model is never shed")
      const next = send("POST", "/v1/runs", "after-1")
      await heldMoreThan(0)
      held.splice(0).forEach((response) => response.end("ok"))
      assert.strictEqual((await next).status, 200, "a closed response frees its place")
    } finally {
      await close()
    }
  })
})

describe("requests waiting on the upstream model", () => {
  it("do not count against the adaptive limit, which holds those using the process; RUNS_MAX_IN_FLIGHT holds all", async () => {
    // The limit starts at 64 (the default); at most 100 in flight.
    const guard = startOverloadGuard({ maxLagMs: 0, maxInFlight: 100, cors: makeCors([]) })
    const held: Array<ServerResponse> = []
    let entered = 0
    let upstream = true
    const server = createServer((request, response) => {
      if (guard.shed(request, response)) return
      request.resume()
      // The handler's request now waits on the upstream model (as a run's upstream part does), or uses the process.
      if (upstream) {
        enterUpstream()
        entered++
      }
      held.push(response)
    })
    await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/runs`
    const shed: Array<number> = []
    const send = (count: number) =>
      Array.from({ length: count }, () =>
        fetch(url, { method: "POST", body: "{}" }).then((response) => {
          if (response.status === 503) shed.push(503)
          return response.status
        }))
    const until = async (done: () => boolean) => {
      while (!done()) await new Promise((wake) => setTimeout(wake, 5))
    }
    const release = () => {
      for (; entered > 0; entered--) leaveUpstream()
      held.splice(0).forEach((response) => response.end("ok"))
    }
    const before = waitingOnUpstream()
    try {
      const waiting = send(90)
      await until(() => held.length + shed.length === 90)
      assert.strictEqual(shed.length, 0, "90 waiting on the upstream, past the limit of 64: none shed")
      assert.strictEqual(guard.inFlight(), 90)
      assert.strictEqual(guard.using(), 0)
      const more = send(20)
      await until(() => held.length + shed.length === 110)
      assert.strictEqual(held.length, 100, "RUNS_MAX_IN_FLIGHT counts every request")
      assert.strictEqual(shed.length, 10)
      release()
      assert.deepStrictEqual(new Set([...await Promise.all(waiting), ...await Promise.all(more)]), new Set([200, 503]))
      assert.strictEqual(waitingOnUpstream(), before)

      upstream = false
      shed.length = 0
      const using = send(80)
      await until(() => held.length + shed.length === 80)
      assert.strictEqual(held.length, 64, "requests using the process are held to the limit")
      assert.strictEqual(shed.length, 16)
      release()
      await Promise.all(using)
    } finally {
      release()
      guard.stop()
      await new Promise((closed) => server.close(closed))
    }
  })
})

describe("the time budget (RUNS_TIME_BUDGET_MS)", () => {
  /** Serves `rounds` waves of `wave` runs at once, each `holdMs` of the loop's time, through a guard; returns its limit after. */
  const waves = async (
    budgetMs: number,
    options: { readonly wave: number; readonly holdMs: number; readonly rounds: number; readonly warmupMs?: number }
  ) => {
    const warmup = options.warmupMs === undefined ? {} : { warmupMs: options.warmupMs }
    const guard = startOverloadGuard({ maxLagMs: 0, maxInFlight: 1_024, budgetMs, ...warmup, cors: makeCors([]) })
    const server = createServer((request, response) => {
      if (guard.shed(request, response)) return
      request.resume()
      // The process's own work, after the guard took the run: the loop is busy for it, as for a run's ledger and
      // settlement, and the runs taken together wait for each other's.
      setImmediate(() => {
        const until = performance.now() + options.holdMs
        while (performance.now() < until) {
          // busy
        }
        response.end("ok")
      })
    })
    await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/runs`
    try {
      for (let round = 0; round < options.rounds; round++) {
        await Promise.all(Array.from({ length: options.wave }, () => fetch(url, { method: "POST", body: "{}" }).then((r) => r.text())))
      }
      return guard.limit()
    } finally {
      guard.stop()
      await new Promise((closed) => server.close(closed))
    }
  }

  it("shrinks the limit when runs take longer than the budget, and keeps it when they take less", async () => {
    // 48 at once, each 5 ms of the loop's time: about 240 ms each, past a 20 ms budget, well within a 2 s one.
    const wave = { wave: 48, holdMs: 5, rounds: 3, warmupMs: 0 }
    assert.isBelow(await waves(20, wave), 64, "240 ms against 20 on a busy loop: the process counts as saturated")
    assert.isAtLeast(await waves(2_000, wave), 64, "240 ms against 2 s: nothing to shed")
  })

  it("does not shrink the limit while the process warms up (its first 3 s of completions by default)", async () => {
    // The same waves against the same 20 ms budget, all within the warm-up: a fresh process's times are not its
    // capacity. The warm-up is set far longer than the waves can take on any machine, so the test holds however slow
    // the machine is; without a warm-up the same waves shrink the limit (the test above).
    assert.strictEqual(DefaultLimitOptions.warmupMs, 3_000)
    assert.strictEqual(await waves(20, { wave: 48, holdMs: 5, rounds: 3, warmupMs: 600_000 }), 64)
  })
})
