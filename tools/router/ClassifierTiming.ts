/**
 * How fast the shipped classifier is: the time to read the weights file (as the service does at start), and the
 * time to classify a 4 KB prompt (4,096 characters cut from real corpus prompts, each classified fresh, so no cache
 * helps), after a warm-up, reported as the 50th and 99th percentiles.
 */
import { classifyState } from "../../src/router/classifier/PromptClassifier.js"
import { readWeights } from "../../src/router/classifier/WeightsFile.js"
import { percentile } from "./EvalReport.js"

/** Characters of a timed prompt. */
export const TIMED_PROMPT_CHARS = 4096

/** The timings, in milliseconds. */
export interface ClassifierTimes {
  readonly loadMs: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly prompts: number
}

/** 4 KB prompts built from texts: consecutive texts joined until 4,096 characters, then cut there. */
export const fourKilobytePrompts = (texts: ReadonlyArray<string>, count: number): Array<string> => {
  const prompts: Array<string> = []
  let current = ""
  for (let index = 0; prompts.length < count && index < texts.length * 4; index++) {
    current = current === "" ? texts[index % texts.length]! : `${current}\n\n${texts[index % texts.length]!}`
    if (current.length >= TIMED_PROMPT_CHARS) {
      prompts.push(current.slice(0, TIMED_PROMPT_CHARS))
      current = ""
    }
  }
  return prompts
}

/** Times loading the weights file and classifying the prompts (each `rounds` times, after one warm-up round). */
export const timeClassifier = (weightsPath: string, prompts: ReadonlyArray<string>, rounds = 5): ClassifierTimes => {
  const loadStarted = performance.now()
  const model = readWeights(weightsPath)
  const loadMs = performance.now() - loadStarted
  for (const prompt of prompts) classifyState(model, prompt)
  const times: Array<number> = []
  for (let round = 0; round < rounds; round++) {
    for (const prompt of prompts) {
      const started = performance.now()
      classifyState(model, prompt)
      times.push(performance.now() - started)
    }
  }
  return { loadMs, p50Ms: percentile(times, 0.5), p99Ms: percentile(times, 0.99), prompts: prompts.length }
}
