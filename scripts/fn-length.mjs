/**
 * Functions in `src/` longer than a limit (`npm run fn-length`): every arrow function, function expression,
 * function declaration and method in `src/**\/*.ts`, read with the TypeScript compiler API, is measured from its
 * first line to its last (signature and body, comments included); each one over the limit is printed with its line
 * count, its file and line, and its name (the variable, property or method it is bound to, after the names of the
 * functions around it: `make > completeCheckout`). A function passed as an argument takes the name of what the
 * call is bound to (`const make = Effect.gen(function*() {...})` is `make`).
 *
 *   node scripts/fn-length.mjs                 functions over 60 lines
 *   node scripts/fn-length.mjs --max 40        functions over 40 lines
 *   node scripts/fn-length.mjs --check         the same, and exit 1 when there is any (for CI)
 *   node scripts/fn-length.mjs --root <dir>    another tree with `src/`
 *
 * The rule it serves (README, Architecture tour): no function over 60 lines except a declarative table, which is
 * marked with a `fn-length: table` comment just before it and is then listed apart, never counted as over.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve, sep } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const args = process.argv.slice(2)
const option = (name) => {
  const at = args.indexOf(name)
  return at === -1 ? undefined : args[at + 1]
}
const max = Number(option("--max") ?? 60)
if (!Number.isInteger(max) || max < 1) {
  console.error("--max takes a whole number of lines")
  process.exit(2)
}
const check = args.includes("--check")
const root = resolve(option("--root") ?? dirname(dirname(fileURLToPath(import.meta.url))))

const sourceFiles = () => {
  const files = []
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) files.push(path)
    }
  }
  if (existsSync(join(root, "src"))) walk(join(root, "src"))
  return files.sort()
}

const isFunction = (node) =>
  ts.isArrowFunction(node) || ts.isFunctionExpression(node) || ts.isFunctionDeclaration(node) ||
  ts.isMethodDeclaration(node)

const nameText = (name) =>
  name === undefined ? undefined : ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteral(name) ||
      ts.isNumericLiteral(name)
    ? name.text
    : name.getText()

/** The name a function is bound to: its own, or that of the declaration its (possibly wrapped) call is bound to. */
const bindingName = (node) => {
  if (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) return nameText(node.name) ?? "(anonymous)"
  if (ts.isFunctionExpression(node) && node.name !== undefined) return node.name.text
  let current = node
  let callee
  for (let parent = node.parent; parent !== undefined; current = parent, parent = parent.parent) {
    if (callee === undefined && ts.isCallExpression(parent) && parent.arguments.includes(current)) {
      callee = parent.expression.getText()
    }
    if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
      return nameText(parent.name) ?? "(anonymous)"
    }
    if (ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken && current === parent.right) {
      return parent.left.getText()
    }
    if (ts.isExportAssignment(parent)) return "default"
    const wraps = ts.isCallExpression(parent) || ts.isParenthesizedExpression(parent) || ts.isAsExpression(parent) ||
      ts.isSatisfiesExpression(parent) || ts.isConditionalExpression(parent) ||
      (ts.isPropertyAccessExpression(parent) && parent.expression === current)
    if (!wraps) break
  }
  return callee === undefined ? "(anonymous)" : `(argument of ${callee})`
}

const isTable = (node, source) =>
  (ts.getLeadingCommentRanges(source.text, node.getFullStart()) ?? [])
    .concat(ts.getLeadingCommentRanges(source.text, (ts.isVariableDeclaration(node.parent)
      ? node.parent.parent.parent
      : node).getFullStart()) ?? [])
    .some((range) => source.text.slice(range.pos, range.end).includes("fn-length: table"))

const over = []
const tables = []
for (const file of sourceFiles()) {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true)
  const path = relative(root, file).split(sep).join("/")
  const visit = (node, outer) => {
    let names = outer
    if (isFunction(node)) {
      const name = bindingName(node)
      names = [...outer, name]
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line + 1
      const lines = last - first + 1
      if (lines > max) (isTable(node, source) ? tables : over).push({ lines, path, line: first, name: names.join(" > ") })
    }
    ts.forEachChild(node, (child) => visit(child, names))
  }
  visit(source, [])
}

const byLength = (a, b) => b.lines - a.lines || a.path.localeCompare(b.path) || a.line - b.line
const print = (entry) => console.log(`${String(entry.lines).padStart(5)}  ${entry.path}:${entry.line}  ${entry.name}`)
over.sort(byLength).forEach(print)
if (tables.length > 0) {
  console.log(`declarative tables over ${max} lines (marked "fn-length: table"):`)
  tables.sort(byLength).forEach(print)
}
console.log(`${over.length} function${over.length === 1 ? "" : "s"} over ${max} lines`)
if (check && over.length > 0) process.exit(1)
