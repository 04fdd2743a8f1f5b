/**
 * Assembles exactly the tree the container image ships, in a fresh folder, and starts it as a non-root user: on the
 * embedded database, then on PostgreSQL. What the image holds is read from the Dockerfile's last stage: each `COPY`
 * (a `--from=build /app/X` source is this checkout's built `X`, the build stage's work), and each `RUN npm ...`,
 * run in the folder as the image runs it. No container engine is needed, so CI runs it (`.ci/run`).
 *
 *   node scripts/image-tree.mjs            both databases (PostgreSQL at IMAGE_TREE_DATABASE_URL, default the local
 *                                          postgres://postgres@127.0.0.1:5432/postgres, where it creates and drops a
 *                                          database of its own)
 *   node scripts/image-tree.mjs embedded   the embedded database only
 *
 * Run as root it starts the service as `nobody` (the image runs as uid 1000); otherwise as the user it runs as, who is
 * not root either. Each start must answer `/readyz`, serve an authenticated request and a decision run, run under a
 * uid other than 0, and exit 0 on SIGTERM. Needs dist/ built (`npm run build`) and the npm registry (or its cache).
 */
import { execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { chmodSync, chownSync, copyFileSync, cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const adminUrl = process.env.IMAGE_TREE_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const modes = process.argv[2] === "embedded" ? ["embedded"] : ["embedded", "postgres"]
const asRoot = process.getuid?.() === 0
/** The user the tree runs as: `nobody` when this runs as root. */
const user = asRoot ? { uid: 65534, gid: 65534 } : {}

const say = (line) => console.error(`image-tree: ${line}`)
const sleep = (ms) => new Promise((wake) => setTimeout(wake, ms))

/** The last stage's instructions, continuation lines joined: `[{ op, args }]`. */
const runtimeStage = () => {
  const lines = readFileSync(join(root, "Dockerfile"), "utf8").replace(/\\\n/g, " ").split("\n")
  const instructions = lines.map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => ({ op: line.split(/\s+/)[0].toUpperCase(), args: line.slice(line.split(/\s+/)[0].length).trim() }))
  const lastFrom = instructions.findLastIndex(({ op }) => op === "FROM")
  return instructions.slice(lastFrom + 1)
}

/** Copies what the stage's COPY lines copy into `tree`, runs its `npm` commands there; returns its ENV. */
const assemble = (tree) => {
  const env = {}
  for (const { op, args } of runtimeStage()) {
    if (op === "COPY") {
      const words = args.split(/\s+/)
      const fromBuild = words[0].startsWith("--from=")
      const [sources, target] = [words.slice(fromBuild ? 1 : 0, -1), words.at(-1)]
      for (const source of sources) {
        const from = fromBuild ? join(root, source.replace(/^\/app\//, "")) : join(root, source)
        const to = target.endsWith("/") && sources.length > 1 ? join(tree, target, source) : join(tree, target)
        cpSync(from, to.endsWith("/") ? join(to, source) : to, { recursive: true })
      }
    } else if (op === "RUN" && args.startsWith("npm ")) {
      const command = args.split("&&")[0].trim().split(/\s+/)
      say(`${command.join(" ")}`)
      execFileSync("npm", command.slice(1), { cwd: tree, stdio: ["ignore", "ignore", "inherit"] })
    } else if (op === "ENV") {
      for (const [, key, value] of args.matchAll(/(\w+)=(\S+)/g)) env[key] = value
    }
  }
  return env
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

/**
 * The Node binary the tree runs on: this process's own, copied where the user can run it (the image has its Node in
 * /usr/local/bin; this one may sit in a home folder the user cannot enter).
 */
let nodeBinary = process.execPath

/** Runs `node args...` in the tree as the user, waiting for it to end; its stdout. */
const nodeOnce = (tree, env, args) =>
  execFileSync(nodeBinary, args, { cwd: tree, env, ...user, stdio: ["ignore", "pipe", "inherit"] }).toString()

/** Starts the image's command in the tree as the user; resolves once `/readyz` answers 200. */
const start = async (tree, env) => {
  const port = await freePort()
  const child = spawn(nodeBinary, ["--max-semi-space-size=32", "dist/main.mjs"], {
    cwd: tree,
    env: { ...env, HOST: "127.0.0.1", PORT: String(port) },
    ...user,
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.once("error", (error) => (output += `${error.message}\n`))
  child.stdout.on("data", (chunk) => (output += chunk))
  child.stderr.on("data", (chunk) => (output += chunk))
  const url = `http://127.0.0.1:${port}`
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null || child.pid === undefined) throw new Error(`the service exited (${child.exitCode}):\n${output}`)
    if (attempt > 600) throw new Error(`/readyz did not answer 200 within 60 s:\n${output}`)
    const status = await fetch(`${url}/readyz`).then((response) => response.status, () => 0)
    if (status === 200) break
    await sleep(100)
  }
  const exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)))
  return { url, child, output: () => output, exited }
}

const check = (condition, message) => {
  if (!condition) throw new Error(message)
}

/** The checks every start must pass, with `secret` an owner key of an organization with credit or billing off. */
const exercise = async (service, secret) => {
  const uid = readFileSync(`/proc/${service.child.pid}/status`, "utf8").match(/^Uid:\s+(\d+)/m)?.[1]
  check(uid !== undefined && uid !== "0", `the service runs as uid ${uid}`)
  const headers = { authorization: `Bearer ${secret}`, "content-type": "application/json" }
  const keys = await fetch(`${service.url}/v1/keys`, { headers })
  check(keys.status === 200, `GET /v1/keys answered ${keys.status}: ${await keys.text()}`)
  const run = await fetch(`${service.url}/v1/runs`, {
    method: "POST",
    headers: { ...headers, "idempotency-key": randomBytes(8).toString("hex") },
    body: JSON.stringify({
      kind: "decision",
      state: "I was charged twice for order 42.",
      questions: { refund: { type: "noul", instructions: "Does the customer ask for a refund?" } }
    })
  })
  check(run.status === 200, `POST /v1/runs answered ${run.status}: ${await run.text()}`)
  service.child.kill("SIGTERM")
  const code = await service.exited
  check(code === 0, `SIGTERM: the service exited ${code}:\n${service.output()}`)
}

/** A data folder the user owns, removed after `use`. */
const withDataDir = async (use) => {
  const dataDir = mkdtempSync(join(tmpdir(), "arbiter-image-data-"))
  if (asRoot) chownSync(dataDir, user.uid, user.gid)
  try {
    return await use(dataDir)
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const onEmbedded = (tree, env) =>
  withDataDir(async (dataDir) => {
    const service = await start(tree, { ...env, DATA_DIR: dataDir, WORKERS: "1" })
    // The shipped template must be readable by the image's user, or every first start runs initdb instead.
    check(!service.output().includes("could not copy the template"), `the template was not copied:\n${service.output()}`)
    const { secret } = JSON.parse(readFileSync(join(dataDir, "bootstrap.json"), "utf8"))
    await exercise(service, secret)
  })

const adminQuery = async (text) => {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}

const onPostgres = async (tree, env) => {
  const name = `arbiter_image_${randomBytes(6).toString("hex")}`
  await adminQuery(`CREATE DATABASE ${name}`)
  try {
    const url = new URL(adminUrl)
    url.pathname = `/${name}`
    await withDataDir(async (dataDir) => {
      const withDatabase = { ...env, DATA_DIR: dataDir, DATABASE_URL: url.toString(), BILLING_PROVIDER: "local", WORKERS: "2" }
      nodeOnce(tree, withDatabase, ["dist/cli.mjs", "migrate"])
      const created = JSON.parse(nodeOnce(tree, withDatabase, ["dist/cli.mjs", "org", "create", "--name", "image", "--owner-email", "owner@example.com"]))
      const service = await start(tree, withDatabase)
      await exercise(service, created.key.secret)
    })
  } finally {
    await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  }
}

const main = async () => {
  const tree = mkdtempSync(join(tmpdir(), "arbiter-image-"))
  try {
    const imageEnv = assemble(tree)
    chmodSync(tree, 0o755)
    const nodeFolder = mkdtempSync(join(tmpdir(), "arbiter-image-node-"))
    chmodSync(nodeFolder, 0o755)
    nodeBinary = join(nodeFolder, "node")
    copyFileSync(process.execPath, nodeBinary)
    chmodSync(nodeBinary, 0o755)
    // Only PATH and the locale pass from this shell; everything else is the image's ENV.
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", ...imageEnv, LOG_LEVEL: "warn" }
    for (const mode of modes) {
      await (mode === "embedded" ? onEmbedded : onPostgres)(tree, env)
      say(`the image's tree serves on ${mode === "embedded" ? "the embedded database" : "PostgreSQL"} as a non-root user`)
    }
  } finally {
    rmSync(tree, { recursive: true, force: true })
    if (nodeBinary !== process.execPath) rmSync(dirname(nodeBinary), { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(`image-tree: ${error.stack ?? error}`)
  process.exit(1)
})
