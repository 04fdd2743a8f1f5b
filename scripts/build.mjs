/**
 * Builds dist/, which `npm start` and `npm run cli` run, in three steps:
 *
 *   1. `tsc -p tsconfig.build.json` type-checks `schema/` and `src/` and compiles every module to dist/schema/ and
 *      dist/src/ (what the `./client` export and anything importing single modules use);
 *   2. esbuild bundles the compiled entry points with every dependency they import into one file each,
 *      dist/main.mjs (the server, `npm start`) and dist/cli.mjs (the CLI, `npm run cli`), with source maps back to
 *      the TypeScript: a start reads one file instead of about 1,300 modules. PGlite stays outside the bundles, as
 *      it finds its WebAssembly and data files beside its own modules;
 *   3. dist/embedded-template/ (src/db/EmbeddedTemplate.ts): a PGlite data folder just initialised, made once per
 *      PGlite version, which a first start on an empty DATA_DIR copies instead of running initdb (about 3 s).
 *
 *   node scripts/build.mjs             build now (`npm run build`; step 3 only when the template is not current)
 *   node scripts/build.mjs --if-stale  build only what does not match its inputs (`prestart`, `precli`); a few
 *                                      milliseconds when everything does
 *   node scripts/build.mjs --if-stale --optional
 *                                      the same, but without TypeScript installed (`npm install --omit=dev`) only
 *                                      say so and succeed (`prepare`: such an install ships a dist/ built before)
 *
 * Steps 1 and 2 are current when `dist/.sources` lists exactly the inputs there are now: the TypeScript files and
 * tsconfigs with their sizes and modification times (so an edited, added, removed or replaced file all count), this
 * script, package.json, and a hash of the installed dependency tree (`node_modules/.package-lock.json`, which npm
 * rewrites on every install), since the bundles contain the dependencies. Step 3 is current when the template's
 * stamp names the installed PGlite (checked by the step itself; the quick check only looks for the stamp, as a new
 * PGlite comes with a new dependency tree, which runs the whole build). A template that cannot be made is only
 * reported: starts then run initdb. The data the service reads at run time (`migrations/`, `data/`) is not built: it
 * is read from the project root (src/config/ProjectRoot.ts). Messages go to stderr, so `npm run -s cli -- ... | jq`
 * reads the command's JSON alone.
 */
import { createHash } from "node:crypto"
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const dist = join(root, "dist")
const sourceDirs = ["schema", "src"]
const inputFiles = ["tsconfig.json", "tsconfig.build.json", "package.json", "scripts/build.mjs"]
const installedTree = join(root, "node_modules", ".package-lock.json")
const manifestPath = join(dist, ".sources")
const buildInfoPath = join(dist, ".tsbuildinfo")
/** The bundled programs: name in dist/ (`<name>.mjs`) and their compiled entry module. */
const bundles = { main: join(dist, "src", "main.js"), cli: join(dist, "src", "cli.js") }
const outputs = [...Object.values(bundles), ...Object.keys(bundles).map((name) => join(dist, `${name}.mjs`))]
const templateStamp = join(dist, "embedded-template", "pglite.json")

const walk = (dir, visit) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) walk(path, visit)
    else visit(path)
  }
}

/** One line per input: path, size and modification time; the installed dependency tree by its hash. */
const sourceManifest = () => {
  const files = inputFiles.map((file) => join(root, file))
  for (const dir of sourceDirs) walk(join(root, dir), (path) => path.endsWith(".ts") && files.push(path))
  const lines = files.sort().map((path) => {
    const stat = statSync(path)
    return `${relative(root, path)}\t${stat.size}\t${stat.mtimeMs}`
  })
  const tree = existsSync(installedTree) ? createHash("sha256").update(readFileSync(installedTree)).digest("hex") : "none"
  return [...lines, `${relative(root, installedTree)}\t${tree}`].join("\n")
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

const resolveTool = async (specifier) => {
  const { createRequire } = await import("node:module")
  try {
    return createRequire(join(root, "package.json")).resolve(specifier)
  } catch {
    return undefined
  }
}

/** Step 1: tsc. Exits the process when it fails. */
const compile = async (tsc, previous) => {
  const { spawnSync } = await import("node:child_process")
  // Without the record of a complete build, the incremental state may describe files that are gone: start over.
  if (previous === undefined) rmSync(buildInfoPath, { force: true })
  const result = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json")], {
    cwd: root,
    stdio: ["ignore", process.stderr, process.stderr]
  })
  if (result.status !== 0) {
    console.error(`tsc failed (exit ${result.status ?? result.signal}): dist/ is not built`)
    process.exit(result.status ?? 1)
  }
  pruneOrphans()
}

/**
 * Step 2: the bundles. ES modules, so CommonJS dependencies get a `require` of their own for Node's built-in
 * modules (esbuild's stand-in throws on them); `import.meta.url` in the bundle is the bundle's own, which
 * src/config/ProjectRoot.ts walks up from to the project root as it does from dist/src/.
 */
const bundle = async (esbuildPath) => {
  const esbuild = await import(pathToFileURL(esbuildPath).href)
  const result = await esbuild.build({
    entryPoints: bundles,
    outdir: dist,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: ["@electric-sql/pglite"],
    sourcemap: "linked",
    sourcesContent: false,
    banner: {
      js: "import { createRequire as __arbiterCreateRequire } from \"node:module\";\n" +
        "const require = __arbiterCreateRequire(import.meta.url);"
    },
    logLevel: "warning"
  }).catch(() => undefined)
  if (result === undefined || result.errors.length > 0) {
    console.error("esbuild failed: dist/ is not built")
    process.exit(1)
  }
}

/** Step 3: the embedded database template, made by the compiled module the service seeds from. */
const makeTemplate = async () => {
  try {
    const started = performance.now()
    const { writeTemplate } = await import(pathToFileURL(join(dist, "src", "db", "EmbeddedTemplate.js")).href)
    if ((await writeTemplate()) === "written") {
      console.error(`made dist/embedded-template/ in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    }
  } catch (error) {
    console.error(`could not make dist/embedded-template/ (first starts will run initdb): ${error?.stack ?? error}`)
  }
}

const ifStale = process.argv.includes("--if-stale")
const manifest = sourceManifest()
const previous = readManifest()
const compiled = previous === manifest && outputs.every((file) => existsSync(file))
if (ifStale && compiled && existsSync(templateStamp)) process.exit(0)

if (!ifStale || !compiled) {
  const tsc = await resolveTool("typescript/bin/tsc")
  const esbuild = await resolveTool("esbuild")
  if (tsc === undefined || esbuild === undefined) {
    const missing = tsc === undefined ? "TypeScript" : "esbuild"
    console.error(`cannot build dist/: ${missing} is not installed (run npm install, with the dev dependencies)`)
    process.exit(process.argv.includes("--optional") ? 0 : 1)
  }
  rmSync(manifestPath, { force: true })
  const started = performance.now()
  console.error(previous === undefined ? "building dist/ ..." : "sources changed: rebuilding dist/ ...")
  await compile(tsc, previous)
  await bundle(esbuild)
  writeFileSync(manifestPath, manifest)
  console.error(`built dist/ in ${((performance.now() - started) / 1000).toFixed(1)} s`)
}
await makeTemplate()
