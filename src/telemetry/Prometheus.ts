/**
 * The Prometheus text exposition format (version 0.0.4) of every metric in Effect's registry: one `# HELP` and
 * `# TYPE` per family, then its series. Counters and gauges are one sample each; histograms give cumulative
 * `_bucket{le}` samples (ending at `+Inf`), `_sum` and `_count`; frequencies are counters with a `key` label;
 * summaries give `quantile` samples, `_sum` and `_count`. Names and label names are reduced to the characters
 * Prometheus accepts; label values are escaped.
 */
import type { Metric } from "effect"
import { snapshotMetrics } from "./Metrics.js"

/** The content type of the rendering. */
export const PrometheusContentType = "text/plain; version=0.0.4; charset=utf-8"

const metricName = (name: string) => name.replace(/[^a-zA-Z0-9_:]/g, "_").replace(/^([0-9])/, "_$1")
const labelName = (name: string) => name.replace(/[^a-zA-Z0-9_]/g, "_").replace(/^([0-9])/, "_$1")
const escapeValue = (value: string) => value.replace(/\\/g, "\\\\").replace(/"/g, "\\\"").replace(/\n/g, "\\n")
const escapeHelp = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

const number = (value: number | bigint): string =>
  typeof value === "bigint"
    ? value.toString()
    : Number.isNaN(value)
    ? "NaN"
    : value === Infinity
    ? "+Inf"
    : value === -Infinity
    ? "-Inf"
    : String(value)

type Attributes = Metric.Metric.AttributeSet | undefined

const labelText = (attributes: Attributes, extra?: readonly [string, string]): string => {
  const parts = attributes === undefined
    ? []
    : Object.entries(attributes).map(([key, value]) => `${labelName(key)}="${escapeValue(value)}"`)
  if (extra !== undefined) parts.push(`${extra[0]}="${escapeValue(extra[1])}"`)
  return parts.length === 0 ? "" : `{${parts.join(",")}}`
}

type Family = {
  readonly type: string
  readonly help: string
  readonly series: Array<{ readonly key: string; readonly snapshot: Metric.Metric.Snapshot }>
}

const typeOf = (snapshot: Metric.Metric.Snapshot): string =>
  snapshot.type === "Counter" || snapshot.type === "Frequency"
    ? "counter"
    : snapshot.type === "Gauge"
    ? "gauge"
    : snapshot.type === "Histogram"
    ? "histogram"
    : "summary"

const seriesLines = (name: string, snapshot: Metric.Metric.Snapshot): Array<string> => {
  const tags = snapshot.attributes
  switch (snapshot.type) {
    case "Counter":
      return [`${name}${labelText(tags)} ${number(snapshot.state.count)}`]
    case "Gauge":
      return [`${name}${labelText(tags)} ${number(snapshot.state.value)}`]
    case "Frequency":
      return [...snapshot.state.occurrences].map(([key, n]) => `${name}${labelText(tags, ["key", key])} ${number(n)}`)
    case "Histogram":
      return [
        ...snapshot.state.buckets.map(([boundary, n]) =>
          `${name}_bucket${labelText(tags, ["le", boundary === Infinity ? "+Inf" : String(boundary)])} ${number(n)}`
        ),
        `${name}_sum${labelText(tags)} ${number(snapshot.state.sum)}`,
        `${name}_count${labelText(tags)} ${number(snapshot.state.count)}`
      ]
    case "Summary":
      return [
        ...snapshot.state.quantiles.map(([q, value]) => `${name}${labelText(tags, ["quantile", String(q)])} ${number(value ?? NaN)}`),
        `${name}_sum${labelText(tags)} ${number(snapshot.state.sum)}`,
        `${name}_count${labelText(tags)} ${number(snapshot.state.count)}`
      ]
  }
}

/** Renders metric snapshots (default: a snapshot of the registry now), families sorted by name. */
export const renderPrometheus = (snapshots: ReadonlyArray<Metric.Metric.Snapshot> = snapshotMetrics()): string => {
  const families = new Map<string, Family>()
  for (const snapshot of snapshots) {
    const name = metricName(snapshot.id)
    let family = families.get(name)
    if (family === undefined) {
      family = { type: typeOf(snapshot), help: snapshot.description ?? name, series: [] }
      families.set(name, family)
    }
    family.series.push({ key: labelText(snapshot.attributes), snapshot })
  }
  const out: Array<string> = []
  for (const name of [...families.keys()].sort()) {
    const family = families.get(name)!
    out.push(`# HELP ${name} ${escapeHelp(family.help)}`, `# TYPE ${name} ${family.type}`)
    family.series.sort((a, b) => a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
    for (const { snapshot } of family.series) out.push(...seriesLines(name, snapshot))
  }
  return out.length === 0 ? "" : `${out.join("\n")}\n`
}
