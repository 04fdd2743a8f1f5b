/**
 * The Prometheus text exposition format (version 0.0.4) of metric families (MetricFamilies.ts): one `# HELP` and
 * `# TYPE` per family, families sorted by name, then its series sorted by labels. Counters and gauges are one sample
 * each; histograms give cumulative `_bucket{le}` samples (ending at `+Inf`, the series' count), `_sum` and `_count`.
 * Family names are valid already (MetricFamilies.ts drops any other); label names are reduced to the characters
 * Prometheus accepts; label values are escaped.
 */
import type { Metric } from "effect"
import { type Family, familiesOf, type HistogramSeries, type SeriesLabels, type ValueSeries } from "./MetricFamilies.js"
import { snapshotMetrics } from "./Metrics.js"

/** The content type of the rendering. */
export const PrometheusContentType = "text/plain; version=0.0.4; charset=utf-8"

const labelName = (name: string) => name.replace(/[^a-zA-Z0-9_]/g, "_").replace(/^([0-9])/, "_$1")
const escapeValue = (value: string) => value.replace(/\\/g, "\\\\").replace(/"/g, "\\\"").replace(/\n/g, "\\n")
const escapeHelp = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

const number = (value: number): string =>
  Number.isNaN(value) ? "NaN" : value === Infinity ? "+Inf" : value === -Infinity ? "-Inf" : String(value)

const labelText = (labels: SeriesLabels, extra?: readonly [string, string]): string => {
  const parts = Object.entries(labels).map(([key, value]) => `${labelName(key)}="${escapeValue(value)}"`)
  if (extra !== undefined) parts.push(`${extra[0]}="${escapeValue(extra[1])}"`)
  return parts.length === 0 ? "" : `{${parts.join(",")}}`
}

const histogramLines = (name: string, series: HistogramSeries): Array<string> => [
  ...series.bounds.map((bound, i) => `${name}_bucket${labelText(series.labels, ["le", String(bound)])} ${number(series.counts[i]!)}`),
  `${name}_bucket${labelText(series.labels, ["le", "+Inf"])} ${number(series.count)}`,
  `${name}_sum${labelText(series.labels)} ${number(series.sum)}`,
  `${name}_count${labelText(series.labels)} ${number(series.count)}`
]

const byLabels = <S extends { readonly labels: SeriesLabels }>(series: ReadonlyArray<S>): Array<S> =>
  series.map((one) => ({ one, key: labelText(one.labels) }))
    .sort((a, b) => a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
    .map(({ one }) => one)

/** Renders metric families, sorted by name. */
export const renderFamilies = (families: ReadonlyArray<Family>): string => {
  const out: Array<string> = []
  for (const family of [...families].sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) {
    out.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`)
    if (family.type === "histogram") {
      for (const series of byLabels(family.series)) out.push(...histogramLines(family.name, series))
    } else {
      for (const series of byLabels<ValueSeries>(family.series)) {
        out.push(`${family.name}${labelText(series.labels)} ${number(series.value)}`)
      }
    }
  }
  return out.length === 0 ? "" : `${out.join("\n")}\n`
}

/** Renders the service's families of metric snapshots (default: a snapshot of the registry now). */
export const renderPrometheus = (snapshots: ReadonlyArray<Metric.Metric.Snapshot> = snapshotMetrics()): string =>
  renderFamilies(familiesOf(snapshots))
