/**
 * `WORKERS` processes on one port (src/Workers.ts, src/http/SharedPort.ts): the primary binds the port and never
 * accepts; each worker accepts on copies of the socket, so it takes several new connections per turn of its event
 * loop instead of one (libuv 1.45 and later accept once per turn and handle). A worker whose loop turns slowly, as a
 * loaded one's does, must still take a burst of new connections at once: else they wait in the kernel, unseen by
 * the overload guard, and their answers come late.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { readdirSync, readlinkSync } from "node:fs"
import { Agent, createServer as createHttpServer, request } from "node:http"
import { type AddressInfo, createServer } from "node:net"
import { freePort, startNode } from "../../bench/support/Processes.js"
import { acceptAlone, prepareAlone } from "../../src/http/SharedPort.js"
import { databaseMode, freshPostgresDatabase } from "../support/TestDatabase.js"

const get = (port: number, path: string, agent: Agent) =>
  new Promise<{ pid: number; turn: number }>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, agent }, (response) => {
      let body = ""
      response.on("data", (chunk) => (body += chunk))
      response.on("end", () => resolve(JSON.parse(body)))
    })
    req.on("error", reject)
    req.end()
  })

/** The most descriptors a process holds on one socket (copies of a listening socket share it), from /proc. */
const largestSocketGroup = (pid: number): number => {
  const bySocket = new Map<string, number>()
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let link = ""
    try {
      link = readlinkSync(`/proc/${pid}/fd/${fd}`)
    } catch {
      continue
    }
    if (link.startsWith("socket:")) bySocket.set(link, (bySocket.get(link) ?? 0) + 1)
  }
  return Math.max(0, ...bySocket.values())
}

const spawnFixture = (port: number, workers: number, env: Record<string, string> = {}) =>
  spawn(process.execPath, ["--import", "tsx", "test/http/fixtures/SharedPortServer.ts"], {
    env: { ...process.env, HOST: "127.0.0.1", PORT: String(port), WORKERS: String(workers), DATABASE_URL: "postgres://unused", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })

/** What a child process wrote so far (stdout and stderr), and its exit code once it exits. */
const watch = (child: ReturnType<typeof spawnFixture>) => {
  let output = ""
  child.stdout.on("data", (chunk) => (output += chunk))
  child.stderr.on("data", (chunk) => (output += chunk))
  const stopped = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  return { output: () => output, stopped }
}

const startFixture = async (workers: number) => {
  const port = await freePort()
  const child = spawnFixture(port, workers)
  const { output, stopped } = watch(child)
  for (let attempt = 0; (output().match(/accepting/g) ?? []).length < workers; attempt++) {
    if (attempt > 300 || child.exitCode !== null) throw new Error(`the fixture did not start:\n${output()}`)
    await new Promise((wake) => setTimeout(wake, 100))
  }
  /** The workers that said they accept, in the order they did. */
  const workerPids = () => [...output().matchAll(/worker (\d+) accepting/g)].map((match) => Number(match[1]))
  return { port, child, output, stopped, workerPids }
}

describe("WORKERS share one port", () => {
  it("each worker takes a burst of new connections in one turn of its loop, and the primary takes none", async () => {
    const fixture = await startFixture(2)
    try {
      const workers = fixture.workerPids()
      assert.strictEqual(workers.length, 2, fixture.output())
      // Both loops stand still while 64 clients connect: on their next turn the connections are all waiting.
      for (const pid of workers) process.kill(pid, "SIGUSR2")
      await new Promise((wake) => setTimeout(wake, 100))
      const agent = new Agent({ keepAlive: false, maxSockets: 64 })
      const answers = await Promise.all(Array.from({ length: 64 }, () => get(fixture.port, "/", agent)))
      agent.destroy()
      const perTurn = new Map<string, number>()
      for (const { pid, turn } of answers) perTurn.set(`${pid}/${turn}`, (perTurn.get(`${pid}/${turn}`) ?? 0) + 1)
      const busiest = Math.max(...perTurn.values())
      // One listening handle per worker would take one connection per turn; each has 64 copies.
      assert.isAtLeast(busiest, 8, JSON.stringify([...perTurn]))
      assert.isTrue(answers.every(({ pid }) => workers.includes(pid)), "only workers answer")
      fixture.child.kill("SIGTERM")
      assert.strictEqual(await fixture.stopped, 0)
    } finally {
      fixture.child.kill("SIGKILL")
    }
  }, 60_000)

  it("a process serving alone (WORKERS=1) also takes a burst of new connections in one turn, on its helper's copies", async () => {
    const fixture = await startFixture(1)
    try {
      const [pid] = fixture.workerPids()
      assert.strictEqual(pid, fixture.child.pid, "the process serves itself: no primary")
      assert.notInclude(fixture.output(), "fell back to one handle")
      assert.isAtLeast(largestSocketGroup(pid!), 64, "64 descriptors of one listening socket")
      process.kill(pid!, "SIGUSR2")
      await new Promise((wake) => setTimeout(wake, 100))
      const agent = new Agent({ keepAlive: false, maxSockets: 64 })
      const answers = await Promise.all(Array.from({ length: 64 }, () => get(fixture.port, "/", agent)))
      agent.destroy()
      const perTurn = new Map<number, number>()
      for (const { turn } of answers) perTurn.set(turn, (perTurn.get(turn) ?? 0) + 1)
      assert.isAtLeast(Math.max(...perTurn.values()), 8, JSON.stringify([...perTurn]))
      assert.isTrue(answers.every((answer) => answer.pid === pid))
      fixture.child.kill("SIGTERM")
      assert.strictEqual(await fixture.stopped, 0)
    } finally {
      fixture.child.kill("SIGKILL")
    }
  }, 60_000)

  it("a process serving alone gathers its copies while its app is built, accepts on all of them, and lets go", async () => {
    const prepared = await prepareAlone({ host: "127.0.0.1", port: 0 })
    // The helper's copies arrive before the server exists (its app is still being built).
    await new Promise((wake) => setTimeout(wake, 1_000))
    const server = createHttpServer((_request, response) => response.end("gathered"))
    const accepting = await prepared.accept(server)
    assert.isUndefined(accepting.fallback)
    assert.isAtLeast(largestSocketGroup(process.pid), 64, "64 descriptors of the listening socket")
    const answer = await fetch(`http://127.0.0.1:${accepting.address.port}/`, { headers: { connection: "close" } })
    assert.strictEqual(await answer.text(), "gathered")
    prepared.abandon()
    await new Promise<void>((resolve) => accepting.stop(resolve))
    assert.isBelow(largestSocketGroup(process.pid), 64, "every copy closed")
    const after = await fetch(`http://127.0.0.1:${accepting.address.port}/`).then(() => "answered", (error: Error) => error.message)
    assert.strictEqual(after, "fetch failed")
  }, 60_000)

  it("a start that fails before the server accepts closes the port and the copies gathered", async () => {
    const prepared = await prepareAlone({ host: "127.0.0.1", port: 0 })
    await new Promise((wake) => setTimeout(wake, 1_000))
    assert.isAtLeast(largestSocketGroup(process.pid), 64)
    prepared.abandon()
    await new Promise((wake) => setTimeout(wake, 100))
    assert.isBelow(largestSocketGroup(process.pid), 64)
    const after = await fetch(`http://127.0.0.1:${prepared.address.port}/`).then(() => "answered", (error: Error) => error.message)
    assert.strictEqual(after, "fetch failed")
  }, 60_000)

  it("a process serving alone whose copies do not come listens on its one handle, and says why", async () => {
    const server = createHttpServer((_request, response) => response.end("alone"))
    const accepting = await acceptAlone(server, { host: "127.0.0.1", port: 0 }, () => (_onCopy, onError) =>
      onError(new Error("no helper here")))
    try {
      assert.strictEqual(accepting.fallback?.message, "no helper here")
      assert.isAbove(accepting.address.port, 0)
      const answer = await fetch(`http://127.0.0.1:${accepting.address.port}/`, { headers: { connection: "close" } })
      assert.strictEqual(await answer.text(), "alone")
    } finally {
      await new Promise<void>((resolve) => accepting.stop(resolve))
    }
    const after = await fetch(`http://127.0.0.1:${accepting.address.port}/`).then(() => "answered", (error: Error) => error.message)
    assert.strictEqual(after, "fetch failed", "stopped: the port is closed")
  }, 60_000)

  it("a port another process listens on stops the primary with the reason, instead of a random port", async () => {
    const blocker = createServer()
    const port = await new Promise<number>((resolve) =>
      blocker.listen(0, "127.0.0.1", () => resolve((blocker.address() as AddressInfo).port)))
    const child = spawnFixture(port, 2)
    try {
      const { output, stopped } = watch(child)
      assert.strictEqual(await stopped, 1, output())
      assert.include(output(), `could not bind 127.0.0.1:${port}: EADDRINUSE`)
      assert.notInclude(output(), "accepting")
    } finally {
      child.kill("SIGKILL")
      blocker.close()
    }
  }, 60_000)

  it("workers that cannot start stop the primary with their exit code, instead of being started again forever", async () => {
    const child = spawnFixture(await freePort(), 2, { FAIL_START: "3" })
    try {
      const { output, stopped } = watch(child)
      assert.strictEqual(await stopped, 3, output())
      assert.include(output(), "before the service came up; stopping")
      assert.notInclude(output(), "starting another")
    } finally {
      child.kill("SIGKILL")
    }
  }, 60_000)

  it("a worker that dies is replaced and the port keeps answering", async () => {
    const fixture = await startFixture(2)
    try {
      const [first] = fixture.workerPids()
      process.kill(first!, "SIGKILL")
      for (let attempt = 0; (fixture.output().match(/accepting/g) ?? []).length < 3; attempt++) {
        if (attempt > 300) throw new Error(`no worker replaced the one killed:\n${fixture.output()}`)
        await new Promise((wake) => setTimeout(wake, 100))
      }
      const agent = new Agent({ keepAlive: false })
      const answers = await Promise.all(Array.from({ length: 40 }, () => get(fixture.port, "/", agent)))
      agent.destroy()
      const live = fixture.workerPids().filter((pid) => pid !== first)
      assert.isTrue(answers.every(({ pid }) => live.includes(pid)), JSON.stringify({ live, answers }))
      fixture.child.kill("SIGTERM")
      assert.strictEqual(await fixture.stopped, 0)
    } finally {
      fixture.child.kill("SIGKILL")
    }
  }, 60_000)
})

describe.skipIf(databaseMode() !== "postgres")("the service under WORKERS (PostgreSQL)", () => {
  it.live("answers on its port from both workers, and stops cleanly on SIGTERM", () =>
    Effect.gen(function*() {
      const database = yield* freshPostgresDatabase
      const service = yield* Effect.acquireRelease(
        Effect.promise(() => startNode("src/main.ts", { DATABASE_URL: database.url, WORKERS: "2", LOG_LEVEL: "info", BILLING_PROVIDER: "local" }, "/readyz")),
        (child) => Effect.promise(child.stop)
      )
      const statuses = yield* Effect.promise(() =>
        Promise.all(Array.from({ length: 40 }, () => fetch(`${service.url}/healthz`).then((response) => response.status)))
      )
      assert.isTrue(statuses.every((status) => status === 200), JSON.stringify(statuses))
      // Both workers come up (the port answers as soon as the first does).
      for (let attempt = 0; (service.output().match(/listening on/g) ?? []).length < 2; attempt++) {
        assert.isBelow(attempt, 300, service.output())
        yield* Effect.sleep(100)
      }
      const exited = new Promise<number | null>((resolve) => service.process.once("exit", (code) => resolve(code)))
      service.process.kill("SIGTERM")
      assert.strictEqual(yield* Effect.promise(() => exited), 0, service.output())
    }), 60_000)
})
