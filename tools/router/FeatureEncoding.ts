/**
 * The corpus as numbers, for training: every row's feature names interned once into ids of one dictionary (in
 * the order rows and features are met, so the ids are the same on every run), with its lexical feature count and
 * its difficulty signals. Each fold of the cross-validation then keeps the part of the dictionary its own training
 * rows support (`selectVocabulary`), so a held-out source never shapes the features it is judged with.
 */
import { SIGNAL_VALUE, type SparseVector } from "../../src/router/classifier/ClassifierModel.js"
import { difficultySignals } from "../../src/router/classifier/DifficultySignals.js"
import { promptTextOfTask } from "../../src/router/classifier/PromptText.js"
import { promptFeatures } from "../../src/router/classifier/TextFeatures.js"

/** One encoded row. */
export interface EncodedRow {
  readonly lexical: Int32Array
  readonly signals: Int32Array
  /** Lexical features of the prompt, known or not (the normalization counts them all, as inference does). */
  readonly lexicalCount: number
  readonly difficulty: Float64Array
  /** P(not English) of the language detector, for the language rule (`LanguageRule.ts`). */
  readonly nonEnglish: number
}

/** The dictionary and the encoded rows. */
export interface EncodedCorpus {
  readonly names: ReadonlyArray<string>
  readonly rows: ReadonlyArray<EncodedRow>
}

/** Encodes prompts (whole tasks, read through the router's excerpt exactly as at inference). */
export const encodeRows = (texts: ReadonlyArray<string>): EncodedCorpus => {
  const ids = new Map<string, number>()
  const names: Array<string> = []
  const intern = (name: string): number => {
    let id = ids.get(name)
    if (id === undefined) {
      id = names.length
      ids.set(name, id)
      names.push(name)
    }
    return id
  }
  const rows = texts.map((task): EncodedRow => {
    const prompt = promptTextOfTask(task)
    const features = promptFeatures(prompt)
    return {
      lexical: Int32Array.from(features.lexical, intern),
      signals: Int32Array.from(features.signals, intern),
      lexicalCount: features.lexical.length,
      difficulty: difficultySignals(features, prompt.totalChars),
      nonEnglish: features.language.nonEnglish
    }
  })
  return { names, rows }
}

/** Which features a fold keeps: a lexical feature in at least `minRows` rows of `minSources` sources, a signal in 2. */
export interface VocabularyRule {
  readonly minRows: number
  readonly minSources: number
}

/** Maps dictionary ids to vocabulary rows (-1 when dropped), counting support over the given training rows. */
export const selectVocabulary = (
  corpus: EncodedCorpus,
  sources: ReadonlyArray<string>,
  training: ReadonlyArray<number>,
  rule: VocabularyRule
): { readonly rows: Int32Array; readonly size: number } => {
  const size = corpus.names.length
  const rowCount = new Int32Array(size)
  const sourceCount = new Int32Array(size)
  const lastSource = new Int32Array(size).fill(-1)
  const sourceIds = new Map<string, number>()
  const ordered = [...training].sort((a, b) => (sources[a]! < sources[b]! ? -1 : sources[a]! > sources[b]! ? 1 : a - b))
  for (const index of ordered) {
    const source = sourceIds.get(sources[index]!) ?? sourceIds.size
    sourceIds.set(sources[index]!, source)
    const row = corpus.rows[index]!
    for (const list of [row.lexical, row.signals]) {
      for (const id of list) {
        rowCount[id] = rowCount[id]! + 1
        if (lastSource[id] !== source) {
          lastSource[id] = source
          sourceCount[id] = sourceCount[id]! + 1
        }
      }
    }
  }
  const rows = new Int32Array(size).fill(-1)
  let kept = 0
  corpus.names.forEach((name, id) => {
    const keep = name.startsWith("s:")
      ? rowCount[id]! >= 2
      : rowCount[id]! >= rule.minRows && sourceCount[id]! >= rule.minSources
    if (keep) rows[id] = kept++
  })
  return { rows, size: kept }
}

/** A row's sparse vector over a vocabulary, with the values inference gives (`ClassifierModel.typeLogits`). */
export const rowVector = (row: EncodedRow, vocabulary: Int32Array): SparseVector => {
  const ids: Array<number> = []
  const values: Array<number> = []
  const add = (list: Int32Array, value: number) => {
    for (const id of list) {
      const mapped = vocabulary[id]!
      if (mapped < 0) continue
      ids.push(mapped)
      values.push(value)
    }
  }
  add(row.lexical, 1 / Math.sqrt(Math.max(1, row.lexicalCount)))
  add(row.signals, SIGNAL_VALUE)
  return { ids: Int32Array.from(ids), values: Float32Array.from(values) }
}
