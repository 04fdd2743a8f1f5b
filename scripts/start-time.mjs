/**
 * Measures how long the server takes from launch to `GET /readyz` answering 200 on the embedded database: a first
 * start on an empty DATA_DIR, then restarts on the same folder.
 *
 *   node scripts/start-time.mjs [restarts] [-- command ...]
 *
 * The command defaults to `npm start` (the build check, then `node dist/main.mjs`); e.g.
 * `node scripts/start-time.mjs 3 -- node --import tsx src/main.ts` measures the uncompiled start. Each start gets
 * its own port; it is stopped with SIGTERM (its whole process group) and the next waits until it has let go of the
 * database.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

const separator = process.argv.indexOf("--")
const restarts = Number(process.argv[2] !== undefined && process.argv[2] !== "--" ? process.argv[2] : 3)
const command = separator === -1 ? ["npm", "start", "--silent"] : process.argv.slice(separator + 1)
if (command.length === 0 || !Number.isInteger(restarts) || restarts < 0) {
  console.error("usage: node scripts/start-time.mjs [restarts] [-- command ...]")
  process.exit(2)
}

const sleep = (ms) => new Promise((wake) => setTimeout(wake, ms))

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

const ready = async (url) => {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1_000) })
    await response.arrayBuffer()
    return response.status === 200
  } catch {
    return false
  }
}

const startOnce = async (dataDir) => {
  const port = await freePort()
  const started = performance.now()
  const child = spawn(command[0], command.slice(1), {
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn" },
    stdio: ["ignore", "ignore", "inherit"],
    detached: true
  })
  const exited = new Promise((resolve) => child.once("exit", resolve))
  let elapsed
  while (elapsed === undefined) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode} before it was ready`)
    if (await ready(`http://127.0.0.1:${port}/readyz`)) elapsed = performance.now() - started
    else await sleep(10)
    if (performance.now() - started > 120_000) throw new Error("not ready within 120 s")
  }
  process.kill(-child.pid, "SIGTERM")
  await exited
  for (let waited = 0; existsSync(join(dataDir, "embedded.lock")) && waited < 30_000; waited += 50) await sleep(50)
  return elapsed
}

const dataDir = mkdtempSync(join(tmpdir(), "arbiter-start-"))
try {
  console.log(`first start: ${((await startOnce(dataDir)) / 1000).toFixed(2)} s`)
  for (let index = 1; index <= restarts; index++) {
    console.log(`restart ${index}:   ${((await startOnce(dataDir)) / 1000).toFixed(2)} s`)
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true })
}
