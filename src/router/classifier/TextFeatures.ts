/**
 * The features of a prompt, as names: lower-cased words (`w:`, less the function words of languages other than English,
 * which mark the language, not the task), word pairs (`b:`), the stems of long words (`p:`), character pairs of
 * unspaced scripts and of Hangul (`c:`), numbers as `#`; and signals (`s:`): intent classes anywhere and at the edges
 * (`s:long:` for a long paste), the request's verb, a long task's length, code, traces, SQL, math, tool schemas. The
 * script and language are detected for the facets and the language rule (`LanguageRule.ts`) but are not features: the
 * task decides the family in any language. Line counts, question marks and short lengths only feed the rules
 * (`structure`): in the corpus they mark a dataset's layout, not a task. Training and inference share this one
 * function, so they cannot drift apart.
 */
import { intentClasses } from "./IntentLexicon.js"
import { LANGUAGE_MARKERS, languageSignals, type LanguageSignals } from "./LanguageSignals.js"
import type { PromptText } from "./PromptText.js"
import { structureSignals } from "./TextStructure.js"

/** A prompt's feature names (each once) and what the language detector found. */
export interface PromptFeatures {
  readonly lexical: ReadonlyArray<string>
  readonly signals: ReadonlyArray<string>
  readonly language: LanguageSignals
  /** The lower-cased words, in order, for the facet and difficulty rules. */
  readonly words: ReadonlyArray<string>
  /** Every structure signal of the text (`TextStructure.ts`), for the facet and difficulty rules. */
  readonly structure: ReadonlySet<string>
  /** The lower-cased start and end of the text where the request usually is (the intent classes' window). */
  readonly requestText: string
}

const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}]+/gu
const WORD = /[\p{L}\p{M}\p{N}]+(?:['’][\p{L}]+)?/gu
const DIGIT = /\p{N}/u

/** Words skipped when looking for the request's verb: greetings, politeness and "can you" framing. */
const LEAD_WORDS = new Set(
  ("hi hello hey hiya dear ok okay so please pls plz kindly can could would will you u i i'm im we need want to " +
    "like help me us just quickly now let's lets go ahead and a an the quick question hey there yo")
    .split(" ")
)

/** Edge window for intent classes: the request usually opens or closes a long paste. */
const EDGE_CHARS = 240

/** The part of a long text the intent classes are looked for in: its start and its end (bounds the time). */
const CUE_HEAD_CHARS = 1000
const CUE_TAIL_CHARS = 600

const window = (text: string, head: number, tail: number): string =>
  text.length <= head + tail ? text : `${text.slice(0, head)}\n${text.slice(-tail)}`

const hasDigit = (word: string): boolean => {
  for (let index = 0; index < word.length; index++) {
    const code = word.charCodeAt(index)
    if (code >= 0x30 && code <= 0x39) return true
    if (code >= 0x80 && DIGIT.test(word)) return true
  }
  return false
}

/** The words of a lower-cased text, numbers as `#`, text in unspaced scripts left out. */
export const wordsOf = (lower: string): Array<string> =>
  (lower.replace(UNSPACED, " ").match(WORD) ?? []).map((word) => (hasDigit(word) ? "#" : word))

/** Hiragana: in Japanese mostly endings and particles ("ください", "です"), which mark the language, not the task. */
const isHiragana = (char: string): boolean => char >= "\u3041" && char <= "\u309f"

/**
 * Characters and character pairs of unspaced scripts, leaving out a hiragana character and a pair of two: they say
 * a prompt is Japanese, which the language rule reads elsewhere, and would otherwise pull every Japanese prompt
 * toward the tasks the Japanese training rows happen to have. Words written in hiragana still count through the
 * intent classes ("なぞなぞ").
 */
const unspacedPairs = (lower: string, into: Set<string>) => {
  for (const run of lower.match(UNSPACED) ?? []) {
    const chars = [...run]
    chars.forEach((char, index) => {
      if (!isHiragana(char)) into.add(`c:${char}`)
      const next = chars[index + 1]
      if (next !== undefined && !(isHiragana(char) && isHiragana(next))) into.add(`c:${char}${next}`)
    })
  }
}

const HANGUL = /\p{Script=Hangul}+/gu

/**
 * Character pairs of Hangul words: a Korean word carries its particles and endings ("자기소개서를", "자기소개서에서"), so
 * the word is rarely seen twice, while the pairs of its stem are.
 */
const hangulPairs = (lower: string, into: Set<string>) => {
  for (const run of lower.match(HANGUL) ?? []) {
    for (let index = 0; index + 1 < run.length; index++) into.add(`c:${run[index]}${run[index + 1]}`)
  }
}

/** Words this long also count by their first STEM_CHARS characters. */
const STEM_MIN_CHARS = 7
const STEM_CHARS = 5

/**
 * The stem of a long word: inflected and derived forms share it ("zusammenfassen", "zusammenfassung";
 * "summarize", "summarizing"; "функция", "функции"), so a task is recognized in the forms training did not see.
 */
const stemOf = (word: string): string | null => (word.length >= STEM_MIN_CHARS ? `p:${word.slice(0, STEM_CHARS)}` : null)

/** A task this long is a paste with a request around it: its edge classes also count as `s:long:<class>`. */
const LONG_CHARS = 1500

/** The length bucket of a task of LONG_CHARS or more (a pasted document, log or codebase), else null. */
const lengthBucket = (chars: number): string | null =>
  chars < LONG_CHARS ? null : chars < 4000 ? "xl" : chars < 10_000 ? "xxl" : chars < 30_000 ? "huge" : "vast"

/** Structure signals the model does not read: the layout of a dataset more than the task (see the header). */
const LAYOUT = /^(lines:|asks)/

const longSignals = (lower: string, edgeClasses: ReadonlyArray<string>, into: Set<string>) => {
  for (const name of edgeClasses) into.add(`s:long:${name}`)
  if (lower.trimEnd().endsWith("?")) into.add("s:long:asks_at_end")
  if (lower.slice(0, EDGE_CHARS).includes("?")) into.add("s:long:asks_at_start")
}

const leadSignals = (words: ReadonlyArray<string>, into: Set<string>) => {
  const verb = words.slice(0, 8).find((word) => !LEAD_WORDS.has(word))
  if (verb !== undefined) into.add(`s:verb:${verb}`)
}

/** All features of a prompt. */
export const promptFeatures = (prompt: PromptText): PromptFeatures => {
  const lower = prompt.text.normalize("NFKC").toLowerCase()
  const words = wordsOf(lower)
  const lexical = new Set<string>()
  words.forEach((word, index) => {
    const next = words[index + 1]
    const marker = LANGUAGE_MARKERS.has(word)
    if (!marker) lexical.add(`w:${word}`)
    const stem = stemOf(word)
    if (stem !== null) lexical.add(stem)
    // A pair of two language markers ("de la", "in der") says the language only.
    if (next !== undefined && !(marker && LANGUAGE_MARKERS.has(next))) lexical.add(`b:${word} ${next}`)
  })
  unspacedPairs(lower, lexical)
  hangulPairs(lower, lexical)
  const signals = new Set<string>()
  const requestText = window(lower, CUE_HEAD_CHARS, CUE_TAIL_CHARS)
  for (const name of intentClasses(requestText)) signals.add(`s:cue:${name}`)
  const edgeClasses = intentClasses(window(lower, EDGE_CHARS, EDGE_CHARS))
  for (const name of edgeClasses) signals.add(`s:edge:${name}`)
  if (prompt.totalChars >= LONG_CHARS) longSignals(lower, edgeClasses, signals)
  leadSignals(words, signals)
  const length = lengthBucket(prompt.totalChars)
  if (length !== null) signals.add(`s:len:${length}`)
  if (prompt.omitted) signals.add("s:omitted")
  const structure = new Set(structureSignals(prompt.text))
  for (const name of structure) if (!LAYOUT.test(name)) signals.add(`s:${name}`)
  const language = languageSignals(prompt.text, words)
  return { lexical: [...lexical], signals: [...signals], language, words, structure, requestText }
}
