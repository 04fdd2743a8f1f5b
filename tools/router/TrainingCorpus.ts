/**
 * The training data: the labelled corpus (`prompts.jsonl` of `../shared/data/router-train`, one JSON object per
 * line with text, family, task_type, difficulty, source and lang), the hand-written seed prompts shipped in
 * `data/router-classifier-seeds.jsonl` (source `seed`), and the taxonomy's labels. Every row is checked against the
 * taxonomy; a bad row stops the training with its line number. Only the training and the evaluation read these.
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import type { ClassifierLabels } from "../../src/router/classifier/ClassifierModel.js"

/** One difficulty label of the corpus. */
export type CorpusDifficulty = "easy" | "medium" | "hard"

/** One labelled prompt. */
export interface LabelledPrompt {
  readonly text: string
  readonly family: string
  /** Null for the few rows whose source only fits a family. */
  readonly taskType: string | null
  readonly difficulty: CorpusDifficulty | null
  readonly source: string
  /** The prompt's language code, when the file gives one (reports only). */
  readonly lang?: string | undefined
}

/** A read data file: its rows and the SHA-256 of its bytes (for the weights' provenance). */
export interface ReadRows {
  readonly rows: ReadonlyArray<LabelledPrompt>
  readonly sha256: string
}

const DIFFICULTIES: ReadonlySet<string> = new Set(["easy", "medium", "hard"])

/** The families and task types of a task-types file, in its order. */
export const readLabels = (path: string): ClassifierLabels => {
  const file = JSON.parse(readFileSync(path, "utf8")) as {
    readonly families: ReadonlyArray<string>
    readonly task_types: ReadonlyArray<{ readonly id: string; readonly family: string }>
  }
  return {
    families: [...file.families],
    taskTypes: file.task_types.map((type) => ({ id: type.id, family: type.family }))
  }
}

const parseRow = (line: string, where: string, labels: ClassifierLabels, source: string | null): LabelledPrompt => {
  const row = JSON.parse(line) as Record<string, unknown>
  const text = row["text"]
  const family = row["family"]
  const taskType = row["task_type"] ?? null
  const difficulty = row["difficulty"] ?? null
  const rowSource = source ?? row["source"]
  if (typeof text !== "string" || text.trim() === "") throw new Error(`${where}: no text`)
  if (typeof family !== "string" || !labels.families.includes(family)) throw new Error(`${where}: unknown family`)
  if (taskType !== null && !labels.taskTypes.some((type) => type.id === taskType && type.family === family)) {
    throw new Error(`${where}: task type ${String(taskType)} is not a type of ${family}`)
  }
  if (difficulty !== null && !(typeof difficulty === "string" && DIFFICULTIES.has(difficulty))) {
    throw new Error(`${where}: unknown difficulty ${String(difficulty)}`)
  }
  if (typeof rowSource !== "string" || rowSource === "") throw new Error(`${where}: no source`)
  return {
    text,
    family,
    taskType: taskType as string | null,
    difficulty: difficulty as CorpusDifficulty | null,
    source: rowSource,
    ...(typeof row["lang"] === "string" ? { lang: row["lang"] } : {})
  }
}

/** Reads a JSON-lines file of labelled prompts; `source` overrides each row's own (the seeds are all `seed`). */
export const readRows = (path: string, labels: ClassifierLabels, source: string | null = null): ReadRows => {
  const bytes = readFileSync(path)
  const rows = bytes.toString("utf8").split("\n").flatMap((line, index) =>
    line.trim() === "" ? [] : [parseRow(line, `${path}:${index + 1}`, labels, source)]
  )
  return { rows, sha256: createHash("sha256").update(bytes).digest("hex") }
}
