/**
 * The adaptive limit (src/server/ConcurrencyLimit.ts) in closed- and open-loop models of a process: it serves what the
 * process can serve within the time budget, settles where the time meets the budget under overload (Little's law),
 * grows back with capacity, does not shrink while the loop idles or while a fresh process warms up, and keeps its
 * bounds. The guard around it is tested over HTTP in Overload.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { AdaptiveLimit, DefaultLimitOptions } from "../../src/server/ConcurrencyLimit.js"

describe("the adaptive limit (AdaptiveLimit)", () => {
  /**
   * A process serving `clients` that each send a new request as soon as one ends (an open loop under overload is a
   * very large number of them), completing `perSecond` requests a second whatever the load, in arrival order: a
   * request's own time is the requests in flight over the rate. Returns the smallest limit seen after the first
   * `settleAfter` completions and the last request's own time.
   */
  const serve = (
    limit: AdaptiveLimit,
    clock: { now: number },
    options: { readonly clients: number; readonly perSecond: number; readonly count: number; readonly settleAfter?: number }
  ) => {
    const inFlight: Array<number> = []
    let smallest = Infinity
    let own = 0
    for (let i = 0; i < options.count; i++) {
      while (inFlight.length < Math.min(options.clients, limit.limit)) inFlight.push(inFlight.length + 1)
      own = (inFlight.length * 1000) / options.perSecond
      clock.now += 1000 / options.perSecond
      limit.record(own, inFlight.shift()!, clock.now)
      if (i >= (options.settleAfter ?? 0)) smallest = Math.min(smallest, limit.limit)
    }
    return { smallest, own }
  }

  it("serves a closed loop whose times stay within the budget, however fast runs were before it", () => {
    // A quiet stretch (one run at a time, 2 ms each), then 64 clients sharing a core: about 190 ms each, on time.
    const limit = new AdaptiveLimit({ ...DefaultLimitOptions, initial: 64 })
    const clock = { now: 0 }
    serve(limit, clock, { clients: 1, perSecond: 500, count: 2_000 })
    const busy = serve(limit, clock, { clients: 64, perSecond: 330, count: 5_000 })
    assert.isAtLeast(busy.smallest, 64, "no request of the 64 is ever shed")
    assert.isAtMost(limit.limit, 160, "the limit probes above what is asked, not without bound")
  })

  it("under overload settles where the time meets the budget (Little's law), from a low or a high start", () => {
    for (const initial of [16, 64, 1_024]) {
      const limit = new AdaptiveLimit({ ...DefaultLimitOptions, initial })
      const overloaded = serve(limit, { now: 0 }, { clients: 100_000, perSecond: 160, count: 10_000, settleAfter: 2_000 })
      // 160 runs a second for half a second: 80 in flight.
      assert.isAtLeast(overloaded.smallest, 70, `from ${initial}: it never falls far below, let alone to its minimum`)
      assert.isAtMost(limit.limit, 90, `from ${initial}`)
      assert.isAtMost(overloaded.own, 1.15 * DefaultLimitOptions.budgetMs, `from ${initial}: requests end within the budget`)
    }
  })

  it("under a closed loop past the budget holds near capacity times the budget instead of collapsing", () => {
    // 256 clients at 330 runs a second: 780 ms each unshed; the limit should settle near 165 (500 ms each).
    const limit = new AdaptiveLimit({ ...DefaultLimitOptions, initial: 300 })
    const loop = serve(limit, { now: 0 }, { clients: 256, perSecond: 330, count: 10_000, settleAfter: 500 })
    assert.isAtLeast(loop.smallest, 145)
    assert.isAtMost(limit.limit, 185)
  })

  it("grows back once the process is faster, and a quiet stretch does not count as a low completion rate", () => {
    const limit = new AdaptiveLimit({ ...DefaultLimitOptions, initial: 64 })
    const clock = { now: 0 }
    serve(limit, clock, { clients: 100_000, perSecond: 160, count: 5_000 })
    const saturated = limit.limit
    serve(limit, clock, { clients: 100_000, perSecond: 640, count: 20_000 })
    assert.isAbove(limit.limit, saturated * 3, "four times the capacity: about four times the limit")
    // A minute without a request, then the same overload: the one completion after the quiet is no rate.
    clock.now += 60_000
    const after = serve(limit, clock, { clients: 100_000, perSecond: 640, count: 2_000 })
    assert.isAtLeast(after.smallest, 0.8 * 640 * 0.5)
  })

  it("does not shrink while runs are slow but the event loop idles (they wait on a lock or the database)", () => {
    // 256 clients at 330 runs a second, 780 ms each, as above, but the loop is busy 30 % of the time.
    const waiting = new AdaptiveLimit({ ...DefaultLimitOptions, initial: 300, loopBusy: () => 0.3 })
    const loop = serve(waiting, { now: 0 }, { clients: 256, perSecond: 330, count: 5_000 })
    assert.isAtLeast(loop.smallest, 256, "shedding would not make them faster, only fewer")
    const busy = new AdaptiveLimit({ ...DefaultLimitOptions, initial: 300, loopBusy: () => 1 })
    serve(busy, { now: 0 }, { clients: 256, perSecond: 330, count: 5_000 })
    assert.isAtMost(busy.limit, 185, "the same times on a busy loop: saturated")
  })

  it("does not shrink while a fresh process warms up, and still does once it is warm and overloaded", () => {
    // A fresh process meets 64 clients: 40 runs a second at first (1.6 s each, far past the budget), 400 after 2 s.
    const warming = (warmupMs: number) => {
      const limit = new AdaptiveLimit({ ...DefaultLimitOptions, initial: 64, loopBusy: () => 1, warmupMs })
      const clock = { now: 0 }
      let smallest = Infinity
      for (const perSecond of [40, 60, 100, 160, 250]) {
        smallest = Math.min(smallest, serve(limit, clock, { clients: 64, perSecond, count: perSecond * 0.4 }).smallest)
      }
      smallest = Math.min(smallest, serve(limit, clock, { clients: 64, perSecond: 400, count: 4_000 }).smallest)
      return smallest
    }
    assert.isAtMost(warming(0), 40, "without a warm-up the cold rate takes the limit down")
    assert.isAtLeast(warming(DefaultLimitOptions.warmupMs), 64, "with it, no request of the 64 is ever shed")
    // Overloaded from its first run at 60 a second: 64 in flight take 1.07 s each until the warm-up ends, then 0.5 s.
    const limit = new AdaptiveLimit({ ...DefaultLimitOptions, initial: 64, loopBusy: () => 1 })
    const clock = { now: 0 }
    const early = serve(limit, clock, { clients: 100_000, perSecond: 60, count: 150 })
    assert.strictEqual(early.smallest, 64, "2.5 s in: still warming up")
    const late = serve(limit, clock, { clients: 100_000, perSecond: 60, count: 3_000 })
    assert.isAtMost(limit.limit, 36)
    assert.isAtMost(late.own, 1.15 * DefaultLimitOptions.budgetMs, "once warm, requests end within the budget")
  })

  it("never leaves its bounds, and does not grow while far fewer requests than it are in flight", () => {
    const options = { ...DefaultLimitOptions, initial: 16, min: 4, max: 32 }
    const limit = new AdaptiveLimit(options)
    serve(limit, { now: 0 }, { clients: 100_000, perSecond: 10_000, count: 5_000 })
    assert.strictEqual(limit.limit, 32)
    serve(limit, { now: 1e6 }, { clients: 100_000, perSecond: 2, count: 1_000 })
    assert.strictEqual(limit.limit, 4)
    const idle = new AdaptiveLimit(options)
    for (let i = 0; i < 5_000; i++) idle.record(1, 1, i)
    assert.strictEqual(idle.limit, 16, "a handful in flight says nothing about how many more would fit")
  })
})
