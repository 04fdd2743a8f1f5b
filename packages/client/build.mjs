/**
 * Builds the package into dist/ (`npm run build`; `npm pack` runs it first, as `prepack`): TypeScript compiles
 * src/index.ts and the modules of the repository's `schema/` it imports (the API description the client is made
 * from) to JavaScript with a `.d.ts` beside each, in the repository's layout: dist/packages/client/src/index.js imports
 * dist/schema/Api.js. Nothing else of the service is compiled, and the only package the output imports is `effect`.
 * tsconfig.json compiles without Node's types, so the client stays usable wherever `fetch` is (a browser, Deno, Bun).
 * TypeScript is the repository's own (a devDependency of the root), found from this folder up.
 */
import { spawnSync } from "node:child_process"
import { rmSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const folder = dirname(fileURLToPath(import.meta.url))
let tsc
try {
  tsc = createRequire(join(folder, "package.json")).resolve("typescript/bin/tsc")
} catch {
  console.error("cannot build @arbiter/client: TypeScript is not installed (run npm install at the repository's root)")
  process.exit(1)
}
rmSync(join(folder, "dist"), { recursive: true, force: true })
const result = spawnSync(process.execPath, [tsc, "-p", join(folder, "tsconfig.json")], {
  cwd: folder,
  stdio: ["ignore", process.stderr, process.stderr]
})
if (result.status !== 0) {
  console.error(`tsc failed (exit ${result.status ?? result.signal}): @arbiter/client is not built`)
  process.exit(result.status ?? 1)
}
