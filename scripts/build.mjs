/**
 * Compiles `schema/` and `src/` to `dist/` (`tsc -p tsconfig.build.json`), which `npm start` and `npm run cli` run.
 *
 *   node scripts/build.mjs             build now (`npm run build`)
 *   node scripts/build.mjs --if-stale  build only when dist/ does not match the sources (`prestart`, `precli`);
 *                                      a few milliseconds when it does
 *   node scripts/build.mjs --if-stale --optional
 *                                      the same, but without TypeScript installed (`npm install --omit=dev`) only
 *                                      say so and succeed (`prepare`: such an install ships a dist/ built before)
 *
 * dist/ matches when `dist/.sources` lists exactly the TypeScript files and tsconfigs there are now, with their
 * sizes and modification times (so an edited, added, removed or replaced file all count). The data the service
 * reads at run time (`migrations/`, `data/`) is not compiled: it is read from the project root
 * (src/config/ProjectRoot.ts). Messages go to stderr, so `npm run -s cli -- ... | jq` reads the command's JSON alone.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const dist = join(root, "dist")
const sourceDirs = ["schema", "src"]
const configFiles = ["tsconfig.json", "tsconfig.build.json"]
const manifestPath = join(dist, ".sources")
const buildInfoPath = join(dist, ".tsbuildinfo")
const entryPoints = [join(dist, "src", "main.js"), join(dist, "src", "cli.js")]

const walk = (dir, visit) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) walk(path, visit)
    else visit(path)
  }
}

/** One line per input: path, size and modification time. */
const sourceManifest = () => {
  const files = [...configFiles.map((file) => join(root, file))]
  for (const dir of sourceDirs) walk(join(root, dir), (path) => path.endsWith(".ts") && files.push(path))
  return files
    .sort()
    .map((path) => {
      const stat = statSync(path)
      return `${relative(root, path)}\t${stat.size}\t${stat.mtimeMs}`
    })
    .join("\n")
}

const readManifest = () => {
  try {
    return readFileSync(manifestPath, "utf8")
  } catch {
    return undefined
  }
}

/** Removes compiled files whose source is gone. */
const pruneOrphans = () => {
  for (const dir of sourceDirs) {
    const out = join(dist, dir)
    if (!existsSync(out)) continue
    walk(out, (path) => {
      const compiled = /\.js(\.map)?$/.exec(path)
      if (compiled === null) return
      const source = join(root, relative(dist, path)).replace(/\.js(\.map)?$/, ".ts")
      if (!existsSync(source)) rmSync(path)
    })
  }
}

const tscPath = async () => {
  const { createRequire } = await import("node:module")
  try {
    return createRequire(join(root, "package.json")).resolve("typescript/bin/tsc")
  } catch {
    return undefined
  }
}

const ifStale = process.argv.includes("--if-stale")
const manifest = sourceManifest()
const previous = readManifest()
if (ifStale && previous === manifest && entryPoints.every((file) => existsSync(file))) process.exit(0)

// Loaded only to build: the check above is what every start pays.
const { spawnSync } = await import("node:child_process")
const tsc = await tscPath()
if (tsc === undefined) {
  console.error("cannot build dist/: TypeScript is not installed (run npm install, with the dev dependencies)")
  process.exit(process.argv.includes("--optional") ? 0 : 1)
}
// Without the record of a complete build, the incremental state may describe files that are gone: start over.
if (previous === undefined) rmSync(buildInfoPath, { force: true })
rmSync(manifestPath, { force: true })
const started = performance.now()
console.error(previous === undefined ? "building dist/ ..." : "sources changed: rebuilding dist/ ...")
const result = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json")], {
  cwd: root,
  stdio: ["ignore", process.stderr, process.stderr]
})
if (result.status !== 0) {
  console.error(`tsc failed (exit ${result.status ?? result.signal}): dist/ is not built`)
  process.exit(result.status ?? 1)
}
pruneOrphans()
writeFileSync(manifestPath, manifest)
console.error(`built dist/ in ${((performance.now() - started) / 1000).toFixed(1)} s`)
