/**
 * The import graph between the folders of `src/` and `schema/` (`npm run arch`), and its rule: imports between
 * folders go one way. A folder is a node (`src/router/classifier` is one of its own; the files directly in `src/`
 * are the node `src`, the composition root); an edge A -> B means a module of A imports one of B (`import type`
 * included: a type couples the folders as much as a value). It prints every folder with the folders it imports
 * and how many imports make each edge, then fails (exit 1) on any cycle: a two-way pair (A imports B and B imports
 * A) is named with the imports on both sides; a longer cycle with a path around it and the imports inside it. The
 * same rule holds between modules inside a folder: a module never reaches itself through its imports (an example
 * file typed by the API file that applies it is such a loop), and each module cycle is shown by a path around it.
 *
 *   node scripts/arch.mjs          the repository's graph
 *   node scripts/arch.mjs <root>   the graph of another tree with `src/` (and `schema/`), as the test does
 *
 * Imports are read with TypeScript's own pre-processor (`ts.preProcessFile`: static, `export ... from`, dynamic
 * `import()`), so comments and strings are never mistaken for imports. Only relative specifiers count; packages and
 * files outside `src/` and `schema/` are not nodes.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, normalize, relative, resolve, sep } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const root = resolve(process.argv[2] ?? dirname(dirname(fileURLToPath(import.meta.url))))
const sourceDirs = ["schema", "src"]

const posix = (path) => path.split(sep).join("/")

const sourceFiles = () => {
  const files = []
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (/\.(ts|tsx|mts)$/.test(entry.name) && !entry.name.endsWith(".d.ts")) files.push(path)
    }
  }
  for (const dir of sourceDirs) if (existsSync(join(root, dir))) walk(join(root, dir))
  return files.sort()
}

/** The folder (node) of a path relative to the root, or undefined outside `src/` and `schema/`. */
const folderOf = (relativePath) => {
  const folder = posix(dirname(relativePath))
  return sourceDirs.some((dir) => folder === dir || folder.startsWith(`${dir}/`)) ? folder : undefined
}

/** edges: "A\0B" -> [{ from, to }] (files relative to the root). */
const edges = new Map()
const folders = new Set()
/** Each module (relative to the root) -> the modules of `src/` and `schema/` it imports. */
const moduleImports = new Map()
for (const file of sourceFiles()) {
  const from = posix(relative(root, file))
  const fromFolder = folderOf(from)
  folders.add(fromFolder)
  const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true)
  moduleImports.set(from, new Set())
  for (const { fileName } of importedFiles) {
    if (!fileName.startsWith("./") && !fileName.startsWith("../")) continue
    const to = posix(normalize(join(dirname(from), fileName))).replace(/\.(m?js|jsx)$/, ".ts")
    const toFolder = folderOf(to)
    if (toFolder !== undefined) moduleImports.get(from).add(to)
    if (toFolder === undefined || toFolder === fromFolder) continue
    const key = `${fromFolder}\0${toFolder}`
    if (!edges.has(key)) edges.set(key, [])
    edges.get(key).push({ from, to })
  }
}

const targetsOf = (folder) =>
  [...edges.keys()].filter((key) => key.startsWith(`${folder}\0`)).map((key) => key.split("\0")[1]).sort()

const nodes = [...folders].sort()
const width = Math.max(...nodes.map((node) => node.length))
console.log(`Imports between the folders of ${sourceDirs.map((dir) => `${dir}/`).join(" and ")} (${root}):`)
for (const node of nodes) {
  const targets = targetsOf(node).map((target) => `${target} (${edges.get(`${node}\0${target}`).length})`)
  console.log(`  ${node.padEnd(width)} -> ${targets.length === 0 ? "nothing" : targets.join(", ")}`)
}

const describe = (from, to) =>
  edges.get(`${from}\0${to}`).map((edge) => `      ${edge.from} -> ${edge.to}`).join("\n")

/** The strongly connected components of more than one node (Tarjan), each sorted. */
const cyclesOf = (graphNodes, targets) => {
  const index = new Map()
  const low = new Map()
  const stack = []
  const onStack = new Set()
  const found = []
  let counter = 0
  const connect = (node) => {
    index.set(node, counter)
    low.set(node, counter)
    counter++
    stack.push(node)
    onStack.add(node)
    for (const target of targets(node)) {
      if (!index.has(target)) {
        connect(target)
        low.set(node, Math.min(low.get(node), low.get(target)))
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node), index.get(target)))
      }
    }
    if (low.get(node) === index.get(node)) {
      const component = []
      let member
      do {
        member = stack.pop()
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      if (component.length > 1) found.push(component.sort())
    }
  }
  for (const node of graphNodes) if (!index.has(node)) connect(node)
  return found
}

// Cycles between folders, each shown by its two-way pairs or, where the cycle is longer, by one path around it.
const components = cyclesOf(nodes, targetsOf)

/** The shortest path from `start` back to itself inside a component (breadth-first), as a list of its nodes. */
const cycleThrough = (start, members, targets = targetsOf) => {
  const previous = new Map([[start, null]])
  const queue = [start]
  while (queue.length > 0) {
    const node = queue.shift()
    for (const target of targets(node).filter((member) => members.has(member))) {
      if (target === start) {
        const path = [node]
        for (let at = previous.get(node); at !== null; at = previous.get(at)) path.unshift(at)
        return [...path, start]
      }
      if (!previous.has(target)) {
        previous.set(target, node)
        queue.push(target)
      }
    }
  }
  return [start]
}

// Cycles between modules: within a folder too (between folders they are cycles of folders as well).
const modules = [...moduleImports.keys()].sort()
const moduleTargets = (module) => [...(moduleImports.get(module) ?? [])].filter((to) => moduleImports.has(to)).sort()
const moduleCycles = cyclesOf(modules, moduleTargets)

if (components.length === 0 && moduleCycles.length === 0) {
  console.log("\nOne-way: no two folders import each other, no longer cycle, and no module reaches itself.")
  process.exit(0)
}
for (const component of components) {
  const members = new Set(component)
  const pairs = component.flatMap((a) =>
    component.filter((b) => a < b && edges.has(`${a}\0${b}`) && edges.has(`${b}\0${a}`)).map((b) => [a, b]))
  const inPair = new Set(pairs.flatMap(([a, b]) => [`${a}\0${b}`, `${b}\0${a}`]))
  console.log(`\nCycle between ${component.join(", ")}:`)
  for (const [a, b] of pairs) {
    console.log(`  two-way pair ${a} <-> ${b}\n    ${a} -> ${b}:\n${describe(a, b)}\n    ${b} -> ${a}:\n${describe(b, a)}`)
  }
  if (pairs.length === 0) console.log(`  cycle ${cycleThrough(component[0], members).join(" -> ")}`)
  const others = component.flatMap((from) =>
    targetsOf(from).filter((to) => members.has(to) && !inPair.has(`${from}\0${to}`)).map((to) => [from, to]))
  if (others.length > 0) console.log(pairs.length === 0 ? "  through:" : "  and the other imports inside the cycle:")
  for (const [from, to] of others) console.log(`    ${from} -> ${to}:\n${describe(from, to)}`)
}
for (const component of moduleCycles) {
  console.log(`\nModule cycle ${cycleThrough(component[0], new Set(component), moduleTargets).join(" -> ")}`)
  if (component.length > 2) console.log(`  among ${component.join(", ")}`)
}
if (components.length > 0) {
  const advice = "make each import one-way (README, Architecture tour)"
  console.error(`\n${components.length} cycle(s) between folders: ${advice}.`)
}
if (moduleCycles.length > 0) {
  console.error(`\n${moduleCycles.length} cycle(s) between modules: move what the modules share into one of them.`)
}
process.exit(1)
