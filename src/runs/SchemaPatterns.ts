/**
 * Whether a JSON Schema `pattern` (or a `patternProperties` key) is a regular expression the validator accepts: it
 * builds each as `new RegExp(text, "u")`, so that is the check. Each text is checked once per process: the verdicts
 * are kept in a cache keyed by the text, bounded in entries and in the characters of the texts it holds (the oldest
 * entry goes first), so a stream of distinct patterns costs memory once and a repeated one costs a lookup. Building a
 * RegExp only parses it (V8 compiles one on its first match), which is linear in its length.
 */

/** At most this many patterns are remembered, and at most this many characters of their texts. */
const MaxCachedPatterns = 4_096
const MaxCachedCharacters = 1_048_576

/** A pattern's text to undefined when it is valid, else the parser's reason (without the pattern, which may be long). */
const verdicts = new Map<string, string | undefined>()
let cachedCharacters = 0

const remember = (text: string, verdict: string | undefined): void => {
  if (text.length > MaxCachedCharacters) return
  while (verdicts.size >= MaxCachedPatterns || cachedCharacters + text.length > MaxCachedCharacters) {
    const oldest = verdicts.keys().next()
    if (oldest.done === true) break
    verdicts.delete(oldest.value)
    cachedCharacters -= oldest.value.length
  }
  verdicts.set(text, verdict)
  cachedCharacters += text.length
}

const parse = (text: string): string | undefined => {
  try {
    new RegExp(text, "u")
    return undefined
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    const prefix = `Invalid regular expression: /${text}/u: `
    return message.startsWith(prefix) ? message.slice(prefix.length) : "not a regular expression"
  }
}

/** Undefined when `text` is a valid pattern (Unicode mode, as the validator builds it), else why not. */
export const patternProblem = (text: string): string | undefined => {
  if (verdicts.has(text)) return verdicts.get(text)
  const verdict = parse(text)
  remember(text, verdict)
  return verdict
}

/** How many patterns and characters the cache holds (for tests of its bounds). */
export const patternCacheSize = (): { readonly entries: number; readonly characters: number } => ({
  entries: verdicts.size,
  characters: cachedCharacters
})
