/**
 * What a prompt is made of, read from its characters rather than its words: line count, code (fences, lines that
 * look like code), stack traces and exception names, SQL, math notation (LaTeX, arithmetic, math symbols), tool
 * schemas and JSON, links, pasted logs, transcripts and file headers, lists, quoted passages and question marks.
 * The patterns were written for this project; each names one thing a request visibly contains.
 */

const CODE_LINE = new RegExp(
  "^\\s*(def |class |import |from \\S+ import|function\\b|const |let |var |return\\b|public |private |static |" +
    "#include|using namespace|fn |func |package |if \\(|for \\(|while \\(|}|\\{$|.*;\\s*$|.*\\)\\s*\\{\\s*$|" +
    "\\s{4}\\S.*[=(){}\\[\\]:]|.*=>|<\\/?[a-z]+[ >])"
)

const TRACE = /Traceback \(most recent call last\)|^\s+at [\w$.<>]+\(.*\)\s*$|^\s+File ".*", line \d+|panicked at|Segmentation fault|^\s*at .*:\d+:\d+\)?$/m
const EXCEPTION_NAME = /\b[A-Z]\w*(Error|Exception)\b|\berror\[?E?\d*\]?:|\bERROR\b/
const SQL = /\bselect\b[\s\S]{1,200}?\bfrom\b|\b(insert into|create table|group by|order by|inner join|left join|where \w+ =)\b/i
const LATEX = /\$[^$\n]{1,200}\$|\\(frac|sqrt|int|sum|begin|mathrm|mathbb|cdot|leq|geq|infty|alpha|theta|pi)\b/
const ARITHMETIC = /\d\s*[-+*/^×÷=]\s*\(?\d|\b[a-z]\s*\^\s*\d|\b\d+\s*[a-z]\s*[-+=]|\b[a-z]\s*=\s*-?\d|\d\s*%\s*of\s+\$?\d|\d\s+(times|plus|minus|divided by)\s+\d/i
const MATH_SYMBOL = /[∫∑∏√∞≤≥≠≈∈∀∃πθ±⁡²³]/u
const TOOL_SCHEMA = /"(parameters|properties|required)"\s*:|"type"\s*:\s*"(function|object|dict)"/
const JSON_OBJECT = /\{\s*"[^"\n]{1,40}"\s*:/
const URL = /https?:\/\/\S+/
const FENCE = /```\s*([a-z+#]*)/i
const LIST_ITEM = /^\s*([-*•]|\d+[.)])\s+\S/
const LOG_LINE = /^\s*\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|^\s*\[?(INFO|WARN|WARNING|ERROR|DEBUG)\]?\b/
const SPEAKER_LINE = /^[A-Z][\w .'-]{0,30}:\s+\S/
const FILE_HEADER = /^(#|\/\/|---|\+\+\+|===)\s*(File:|a\/|b\/)?\s*[\w./-]+\.(py|js|ts|java|go|rs|rb|cpp|c|h|cs|php|kt|md|json|yaml|yml)\b/m
const QUOTED = /"[^"\n]{12,}"|“[^”\n]{12,}”|'[^'\n]{12,}'|«[^»\n]{12,}»|「[^」\n]{6,}」/

const lineBucket = (lines: number): string =>
  lines <= 1 ? "1" : lines <= 4 ? "few" : lines <= 15 ? "some" : lines <= 60 ? "many" : "lots"

const shareBucket = (share: number): string => (share === 0 ? "none" : share < 0.2 ? "few" : share < 0.5 ? "some" : "most")

const lineSignals = (lines: ReadonlyArray<string>): Array<string> => {
  const nonEmpty = lines.filter((line) => line.trim() !== "")
  const count = (pattern: RegExp) => nonEmpty.filter((line) => pattern.test(line)).length
  const signals = [`lines:${lineBucket(nonEmpty.length)}`]
  const code = count(CODE_LINE)
  if (code > 0) signals.push(`codelines:${shareBucket(code / Math.max(1, nonEmpty.length))}`)
  if (count(LIST_ITEM) >= 3) signals.push("list")
  if (count(LOG_LINE) >= 3) signals.push("logs")
  if (count(SPEAKER_LINE) >= 4) signals.push("transcript")
  return signals
}

/** The structure signals of a prompt's text (original case). */
export const structureSignals = (text: string): ReadonlyArray<string> => {
  const signals = lineSignals(text.split("\n"))
  const fence = FENCE.exec(text)
  if (fence !== null) signals.push("fence", ...(fence[1] ? [`fence:${fence[1].toLowerCase()}`] : []))
  const checks: ReadonlyArray<readonly [string, RegExp]> = [
    ["trace", TRACE], ["exception", EXCEPTION_NAME], ["sql", SQL], ["latex", LATEX], ["arithmetic", ARITHMETIC],
    ["mathsymbol", MATH_SYMBOL], ["toolschema", TOOL_SCHEMA], ["json", JSON_OBJECT], ["url", URL],
    ["fileheader", FILE_HEADER], ["quoted", QUOTED]
  ]
  for (const [name, pattern] of checks) if (pattern.test(text)) signals.push(name)
  const trimmed = text.trimEnd()
  if (trimmed.endsWith("?") || trimmed.endsWith("？")) signals.push("asks")
  if ((text.match(/[?？]/g) ?? []).length >= 3) signals.push("asks:many")
  return signals
}
