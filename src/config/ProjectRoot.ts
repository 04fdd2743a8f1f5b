/**
 * Where the service's shipped files are (`migrations/`, `data/`, `dist/embedded-template/`, ...), whether the modules
 * run from `src/` (tsx, tests), compiled in `dist/src/`, or bundled into `dist/main.mjs` and `dist/cli.mjs` (`npm
 * start`, the Nix package): the nearest folder above this module that holds the project's package.json. Every path
 * read at run time resolves through `shippedFile`.
 */
import { existsSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const PackageName = "arbiter"

const isProjectRoot = (dir: string): boolean => {
  const manifest = join(dir, "package.json")
  if (!existsSync(manifest)) return false
  try {
    return (JSON.parse(readFileSync(manifest, "utf8")) as { readonly name?: unknown }).name === PackageName
  } catch {
    return false
  }
}

const findProjectRoot = (from: string): string => {
  for (let dir = from; ; dir = dirname(dir)) {
    if (isProjectRoot(dir)) return dir
    if (dirname(dir) === dir) {
      throw new Error(`no package.json named "${PackageName}" above ${from}: the service's files are not installed beside it`)
    }
  }
}

/** The folder of the project's package.json (the checkout, or the installed package). */
export const projectRoot: string = findProjectRoot(dirname(fileURLToPath(import.meta.url)))

/** The absolute path of a file or folder shipped with the service, given relative to the project root. */
export const shippedFile = (...segments: ReadonlyArray<string>): string => join(projectRoot, ...segments)
