/**
 * Script and language detection without a model: the share of letters in each non-Latin script, and for Latin
 * text the language whose common function words (hand-picked, a dozen or two per language, chosen to be rare in
 * English) occur most often. The words were written for this project from general knowledge of each language.
 * The result feeds the classifier's features and the `non_english` facet.
 */

/** Scripts told apart, by Unicode block ranges (first and last code point of each block). */
const SCRIPTS: ReadonlyArray<readonly [string, ReadonlyArray<readonly [number, number]>]> = [
  ["han", [[0x3400, 0x4dbf], [0x4e00, 0x9fff], [0xf900, 0xfaff], [0x20000, 0x2ffff]]],
  ["kana", [[0x3040, 0x30ff], [0x31f0, 0x31ff], [0xff66, 0xff9f]]],
  ["hangul", [[0x1100, 0x11ff], [0x3130, 0x318f], [0xac00, 0xd7af]]],
  ["cyrillic", [[0x0400, 0x052f]]],
  ["arabic", [[0x0600, 0x06ff], [0x0750, 0x077f], [0xfb50, 0xfdff], [0xfe70, 0xfeff]]],
  ["hebrew", [[0x0590, 0x05ff]]],
  ["greek", [[0x0370, 0x03ff], [0x1f00, 0x1fff]]],
  ["thai", [[0x0e00, 0x0e7f]]],
  ["devanagari", [[0x0900, 0x097f]]],
  ["bengali", [[0x0980, 0x09ff]]],
  ["telugu", [[0x0c00, 0x0c7f]]],
  ["tamil", [[0x0b80, 0x0bff]]]
]

const LETTER = /\p{L}/u

const scriptOf = (code: number): string => {
  if (code < 0x250 || (code >= 0x1e00 && code <= 0x1eff)) return "latin"
  for (const [name, ranges] of SCRIPTS) {
    for (const [first, last] of ranges) if (code >= first && code <= last) return name
  }
  return "other"
}

/** Function words per language; English's list is the baseline the others are compared with. */
const FUNCTION_WORDS: ReadonlyArray<readonly [string, string]> = [
  ["en", "the and is are of to that it for with you this what how was be have my can do not which would your"],
  ["es", "el los las que y en del por para con una es está cuál qué cómo pero más muy también puedo hacer tengo " +
    "mi un al hay cuando donde quiero necesito puedes mejor ayuda"],
  ["fr", "le les des et est une du que qui en dans pour pas sur avec ce il elle nous vous je quelle quel quels " +
    "quelles comment être sont à au aux mais où très cette ces mon ma mes votre leur"],
  ["de", "der die das und ist nicht ein eine zu mit von sich auf für dem des im auch ich sie wie hat wird " +
    "welche welcher welches einem einen einer sollte kann können mein meine bitte oder aber nach bei über wir du mir mich warum gibt"],
  ["it", "il di che è un una per non con sono del della gli nel questo anche più cosa perché"],
  ["pt", "os da em um uma para com não é na por mais dos das como qual você isso são"],
  ["nl", "het een en van dat niet op te zijn met voor ik je hij wat hoe er maar ook"],
  ["tr", "ve bir bu için ile ne mi çok olarak daha gibi kadar nasıl ben sen var yok değil"],
  ["pl", "nie na się że jest jak co po ale czy od przez dla być jestem"],
  ["id", "dan yang di ini itu dengan untuk dari tidak ada saya akan apa bagaimana bisa juga"],
  ["sv", "och att det som på är av för med till den inte om har jag hur vad"],
  ["da", "og det er til på som med af ikke jeg hvordan hvad"],
  ["ro", "și la în cu nu că pe este sunt pentru ce mai cum"],
  ["sw", "na ya wa kwa ni za katika hii kama je gani sana"]
]

/** For each function word, the languages it belongs to (by index in FUNCTION_WORDS). */
const LANGUAGES_OF_WORD: ReadonlyMap<string, ReadonlyArray<number>> = (() => {
  const map = new Map<string, Array<number>>()
  FUNCTION_WORDS.forEach(([, words], language) => {
    for (const word of words.split(" ")) map.set(word, [...(map.get(word) ?? []), language])
  })
  return map
})()

/** Function words of Cyrillic-script languages (Russian, Ukrainian): the script says the language already. */
const CYRILLIC_FUNCTION_WORDS = "и в не на что с по как это я для но от из у к же так то бы о мне можно меня есть если или " +
  "уже еще ещё вот мой моя мои все всё його що це як та але або мені чи"

/**
 * Words that mark a language other than English and say nothing of the task: the other languages' function words
 * (less the few that are also English words), and Cyrillic ones. The classifier leaves them out of its features as it
 * leaves out Japanese endings and particles (TextFeatures.ts): the corpus's non-English rows are mostly translation
 * and general requests, and a language's function words would carry those tasks to every prompt in the language.
 */
export const LANGUAGE_MARKERS: ReadonlySet<string> = (() => {
  const english = new Set(FUNCTION_WORDS[0]![1].split(" "))
  // Function words of other languages that are English words too, and "bitte", which stays a feature as "please" does.
  const kept = new Set(["die", "hat", "ben", "hoe", "den", "var", "sen", "bitte"])
  const markers = new Set<string>()
  for (const [, words] of FUNCTION_WORDS.slice(1)) {
    for (const word of words.split(" ")) if (!english.has(word) && !kept.has(word)) markers.add(word)
  }
  for (const word of CYRILLIC_FUNCTION_WORDS.split(" ")) markers.add(word)
  return markers
})()

/** Letters only Vietnamese uses among Latin scripts (tone marks on vowels, and đ). */
const VIETNAMESE = /[ạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹđ]/u

/** What the detector found. */
export interface LanguageSignals {
  /** The non-Latin script with the largest share of letters, when that share is at least 30%. */
  readonly script: string | null
  /** Share of letters outside the Latin script. */
  readonly nonLatinShare: number
  /** The most likely non-English Latin-script language by function words, or null. */
  readonly latinLanguage: string | null
  /** True when that language outweighs English (the text is mostly in it), false when it only appears. */
  readonly latinDominant: boolean
  /** 0 to 1: how sure the detector is that the text is not English. */
  readonly nonEnglish: number
}

const scriptShares = (text: string): { readonly letters: number; readonly counts: Map<string, number> } => {
  const counts = new Map<string, number>()
  let letters = 0
  for (let index = 0; index < text.length; index++) {
    const code = text.codePointAt(index)!
    if (code > 0xffff) index++
    if (code < 0x80) {
      if ((code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)) letters++
      continue
    }
    const latinLetter = code >= 0xc0 && code <= 0x24f && code !== 0xd7 && code !== 0xf7
    if (!latinLetter && (code < 0x250 || !LETTER.test(String.fromCodePoint(code)))) continue
    letters++
    const name = scriptOf(code)
    counts.set(name, (counts.get(name) ?? 0) + 1)
  }
  return { letters, counts }
}

const latinLanguage = (words: ReadonlyArray<string>) => {
  const hits = new Array<number>(FUNCTION_WORDS.length).fill(0)
  for (const word of words) for (const language of LANGUAGES_OF_WORD.get(word) ?? []) hits[language] = hits[language]! + 1
  let best = 1
  for (let language = 2; language < hits.length; language++) if (hits[language]! > hits[best]!) best = language
  return { english: hits[0]!, language: FUNCTION_WORDS[best]![0], hits: hits[best]! }
}

/** Detects the script and language of a text (lower-cased words given separately, already split). */
export const languageSignals = (text: string, words: ReadonlyArray<string>): LanguageSignals => {
  const { counts, letters } = scriptShares(text)
  let nonLatin = 0
  let top: readonly [string, number] | null = null
  for (const [name, count] of counts) {
    if (name === "latin") continue
    nonLatin += count
    if (top === null || count > top[1]) top = [name, count]
  }
  const nonLatinShare = letters === 0 ? 0 : nonLatin / letters
  const script = top !== null && letters > 0 && top[1] / letters >= 0.3 ? top[0] : null
  const latin = latinLanguage(words)
  const vietnamese = VIETNAMESE.test(text)
  const language = vietnamese ? "vi" : latin.hits >= 2 ? latin.language : null
  const dominant = vietnamese || (language !== null && latin.hits >= 2 && latin.hits > 1.5 * latin.english)
  const latinScore = dominant ? Math.min(1, 0.55 + 0.1 * latin.hits - 0.05 * latin.english) : 0
  return {
    script,
    nonLatinShare,
    latinLanguage: language,
    latinDominant: dominant,
    nonEnglish: Math.max(Math.min(1, nonLatinShare * 1.6), vietnamese ? 0.9 : Math.max(0, latinScore))
  }
}
