/**
 * The evaluation printed as plain-text tables: the headline figures, the family confusion matrix (rows are the
 * true family, columns the predicted one), quality per family and per task type, accuracy per group (source,
 * language), and the sanity set's results. Percentages keep one decimal; the text is the same for the same figures.
 */
import type { ClassifierLabels } from "../../src/router/classifier/ClassifierModel.js"
import type { EvalReport } from "./EvalMetrics.js"

const percent = (value: number): string => `${(value * 100).toFixed(1)}%`

const pad = (text: string, width: number): string => (text.length >= width ? text : text + " ".repeat(width - text.length))

const padLeft = (text: string, width: number): string => (text.length >= width ? text : " ".repeat(width - text.length) + text)

/** The headline figures. */
export const headline = (report: EvalReport): string =>
  [
    `rows ${report.rows}`,
    `family accuracy ${percent(report.familyAccuracy)}`,
    `task type top-1 ${percent(report.top1)}`,
    `task type top-5 ${percent(report.top5)}`,
    `macro-F1 ${report.macroF1.toFixed(3)}`,
    `ECE (top family probability, 10 bins) ${report.ece.toFixed(3)}`
  ].join("\n")

/** The family confusion matrix with per-family accuracy. */
export const confusionTable = (report: EvalReport, labels: ClassifierLabels): string => {
  const short = labels.families.map((family) => family.slice(0, 7))
  const lines = [`${pad("true \\ predicted", 16)}${short.map((name) => padLeft(name, 8)).join("")}  accuracy`]
  report.confusion.forEach((row, index) => {
    const total = row.reduce((sum, count) => sum + count, 0)
    const accuracy = total === 0 ? "-" : percent(row[index]! / total)
    lines.push(`${pad(labels.families[index]!, 16)}${row.map((count) => padLeft(String(count), 8)).join("")}  ${padLeft(accuracy, 8)}`)
  })
  return lines.join("\n")
}

/** Precision, recall and F1 per task type (types without held-out rows say so). */
export const typeTable = (report: EvalReport, labels: ClassifierLabels): string => {
  const lines = [`${pad("task type", 40)}${padLeft("rows", 7)}${padLeft("prec.", 8)}${padLeft("recall", 8)}${padLeft("F1", 7)}`]
  labels.taskTypes.forEach((type, index) => {
    const quality = report.perType[index]!
    lines.push(
      quality.support === 0
        ? `${pad(type.id, 40)}${padLeft("0", 7)}   (no corpus rows to hold out)`
        : `${pad(type.id, 40)}${padLeft(String(quality.support), 7)}${padLeft(percent(quality.precision), 8)}` +
          `${padLeft(percent(quality.recall), 8)}${padLeft(quality.f1.toFixed(2), 7)}`
    )
  })
  return lines.join("\n")
}

/** The reliability table: per bin of top family probability, how many predictions and how often right. */
export const reliabilityTable = (report: EvalReport): string =>
  [
    "top family probability   rows   mean confidence   family accuracy",
    ...report.reliability.map((bin) =>
      `${pad(`${bin.from.toFixed(1)} to ${bin.to.toFixed(1)}`, 23)}${padLeft(String(bin.count), 6)}` +
      `${padLeft(percent(bin.confidence), 18)}${padLeft(percent(bin.accuracy), 18)}`
    )
  ].join("\n")

/** Percentiles of a list of numbers (nearest rank). */
export const percentile = (values: ReadonlyArray<number>, share: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1))] ?? NaN
}

/** Per family, from the confusion matrix: held-out rows, recall (the family's accuracy), precision and F1. */
export const familyTable = (report: EvalReport, labels: ClassifierLabels): string => {
  const lines = [`${pad("family", 16)}${padLeft("rows", 7)}${padLeft("accuracy", 10)}${padLeft("prec.", 8)}${padLeft("F1", 7)}`]
  labels.families.forEach((family, index) => {
    const rows = report.confusion[index]!.reduce((sum, count) => sum + count, 0)
    const predicted = report.confusion.reduce((sum, row) => sum + row[index]!, 0)
    const right = report.confusion[index]![index]!
    const recall = rows === 0 ? 0 : right / rows
    const precision = predicted === 0 ? 0 : right / predicted
    const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall)
    lines.push(
      rows === 0
        ? `${pad(family, 16)}${padLeft("0", 7)}`
        : `${pad(family, 16)}${padLeft(String(rows), 7)}${padLeft(percent(recall), 10)}${padLeft(percent(precision), 8)}${padLeft(f1.toFixed(2), 7)}`
    )
  })
  return lines.join("\n")
}

/** Family accuracy per group (a source, a language): `right/rows (percent)`, groups by name. */
export const groupTable = (title: string, groups: ReadonlyMap<string, readonly [number, number]>): string =>
  [
    `${pad(title, 28)}${padLeft("rows", 7)}${padLeft("accuracy", 10)}`,
    ...[...groups].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([name, [right, rows]]) =>
      `${pad(name, 28)}${padLeft(String(rows), 7)}${padLeft(percent(right / Math.max(1, rows)), 10)}`
    )
  ].join("\n")
