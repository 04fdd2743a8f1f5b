/**
 * `WORKERS` processes on one port (src/server/Workers.ts, src/server/SharedPort.ts): the primary reserves the port and
 * never accepts; each serving process listens on 64 sockets of its own on it (SO_REUSEPORT), so it takes several new
 * connections per turn of its event loop instead of one (libuv 1.45 and later accept once per turn and handle). A
 * process whose loop turns slowly, as a loaded one's does, must still take a burst of new connections at once: else
 * they wait in the kernel, unseen by the overload guard, and their answers come late.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { readdirSync, readFileSync, readlinkSync } from "node:fs"
import { Agent, createServer as createHttpServer, request } from "node:http"
import { type AddressInfo, createServer } from "node:net"
import { freePort, startNode } from "../../bench/support/Processes.js"
import { acceptOn, reservePort } from "../../src/server/SharedPort.js"
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

/** The sockets listening on `port` (by inode), from /proc/net/tcp and tcp6. */
const listeningInodes = (port: number): Set<string> => {
  const inodes = new Set<string>()
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const row of readFileSync(table, "utf8").split("\n").slice(1)) {
      const fields = row.trim().split(/\s+/)
      // local_address is ADDRESS:PORT in hex; state 0A is LISTEN; the inode is the tenth field.
      if (fields.length > 9 && fields[3] === "0A" && parseInt(fields[1]!.split(":")[1]!, 16) === port) inodes.add(fields[9]!)
    }
  }
  return inodes
}

/** How many distinct sockets listening on `port` the process `pid` holds. */
const listeningSockets = (pid: number, port: number): number => {
  const listening = listeningInodes(port)
  const held = new Set<string>()
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let link = ""
    try {
      link = readlinkSync(`/proc/${pid}/fd/${fd}`)
    } catch {
      continue
    }
    const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1]
    if (inode !== undefined && listening.has(inode)) held.add(inode)
  }
  return held.size
}

const spawnFixture = (port: number, workers: number, env: Record<string, string> = {}) =>
  spawn(process.execPath, ["--import", "tsx", "test/server/fixtures/SharedPortServer.ts"], {
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
      for (const pid of workers) assert.strictEqual(listeningSockets(pid, fixture.port), 64, `worker ${pid}`)
      assert.strictEqual(listeningSockets(fixture.child.pid!, fixture.port), 0, "the primary listens on none")
      // Both loops stand still while 64 clients connect: on their next turn the connections are all waiting.
      for (const pid of workers) process.kill(pid, "SIGUSR2")
      await new Promise((wake) => setTimeout(wake, 100))
      const agent = new Agent({ keepAlive: false, maxSockets: 64 })
      const answers = await Promise.all(Array.from({ length: 64 }, () => get(fixture.port, "/", agent)))
      agent.destroy()
      const perTurn = new Map<string, number>()
      for (const { pid, turn } of answers) perTurn.set(`${pid}/${turn}`, (perTurn.get(`${pid}/${turn}`) ?? 0) + 1)
      const busiest = Math.max(...perTurn.values())
      // One listening handle per worker would take one connection per turn; each has 64 sockets.
      assert.isAtLeast(busiest, 8, JSON.stringify([...perTurn]))
      assert.isTrue(answers.every(({ pid }) => workers.includes(pid)), "only workers answer")
      fixture.child.kill("SIGTERM")
      assert.strictEqual(await fixture.stopped, 0)
    } finally {
      fixture.child.kill("SIGKILL")
    }
  }, 60_000)

  it("a process serving alone (WORKERS=1) also takes a burst of new connections in one turn, on its 64 sockets", async () => {
    const fixture = await startFixture(1)
    try {
      const [pid] = fixture.workerPids()
      assert.strictEqual(pid, fixture.child.pid, "the process serves itself: no primary")
      assert.strictEqual(listeningSockets(pid!, fixture.port), 64, "64 sockets listening on the port")
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

  it("a process listens on 64 sockets of one port, answers on them, and closes them all on stop", async () => {
    const server = createHttpServer((_request, response) => response.end("served"))
    const accepting = await acceptOn(server, await reservePort({ host: "127.0.0.1", port: 0 }))
    const port = accepting.address.port
    assert.isAbove(port, 0)
    assert.strictEqual(listeningSockets(process.pid, port), 64)
    const answers = await Promise.all(Array.from({ length: 32 }, () =>
      fetch(`http://127.0.0.1:${port}/`, { headers: { connection: "close" } }).then((answer) => answer.text())))
    assert.deepStrictEqual(new Set(answers), new Set(["served"]))
    await new Promise<void>((resolve) => accepting.stop(resolve))
    assert.strictEqual(listeningSockets(process.pid, port), 0, "every socket closed")
    const after = await fetch(`http://127.0.0.1:${port}/`).then(() => "answered", (error: Error) => error.message)
    assert.strictEqual(after, "fetch failed")
  }, 60_000)

  for (const reusePort of [false, true]) {
    it(`a port another process listens on${reusePort ? " with SO_REUSEPORT" : ""} is refused, never shared`, async () => {
      const blocker = createServer()
      const port = await new Promise<number>((resolve) =>
        blocker.listen({ host: "127.0.0.1", port: 0, reusePort }, () => resolve((blocker.address() as AddressInfo).port)))
      try {
        const refused = await reservePort({ host: "127.0.0.1", port }).then(() => "reserved", (error: Error) => error.message)
        assert.strictEqual(refused, `could not bind 127.0.0.1:${port}: EADDRINUSE (another process listens on it)`)
        assert.strictEqual(listeningSockets(process.pid, port), 1, "only the blocker's socket")
      } finally {
        blocker.close()
      }
    }, 60_000)
  }

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
