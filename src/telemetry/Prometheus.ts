/**
 * The Prometheus text exposition format (version 0.0.4) of every metric in Effect's registry: one `# HELP` and
 * `# TYPE` per family, then its series. Counters and gauges are one sample each; histograms give cumulative
 * `_bucket{le}` samples (ending at `+Inf`), `_sum` and `_count`; frequencies are counters with a `key` label;
 * summaries give `quantile` samples, `_sum` and `_count`. Names and label names are reduced to the characters
 * Prometheus accepts; label values are escaped.
 */
import { Metric, MetricState, Option } from "effect"
import type { MetricLabel, MetricPair } from "effect"

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

const labelText = (tags: ReadonlyArray<MetricLabel.MetricLabel>, extra?: readonly [string, string]): string => {
  const parts = tags.map((tag) => `${labelName(tag.key)}="${escapeValue(tag.value)}"`)
  if (extra !== undefined) parts.push(`${extra[0]}="${escapeValue(extra[1])}"`)
  return parts.length === 0 ? "" : `{${parts.join(",")}}`
}

type Family = {
  readonly type: string
  readonly help: string
  readonly series: Array<{ readonly key: string; readonly pair: MetricPair.MetricPair.Untyped }>
}

const typeOf = (state: MetricState.MetricState.Untyped): string =>
  MetricState.isCounterState(state) || MetricState.isFrequencyState(state)
    ? "counter"
    : MetricState.isGaugeState(state)
    ? "gauge"
    : MetricState.isHistogramState(state)
    ? "histogram"
    : "summary"

const seriesLines = (name: string, pair: MetricPair.MetricPair.Untyped): Array<string> => {
  const state = pair.metricState
  const tags = pair.metricKey.tags
  if (MetricState.isCounterState(state)) return [`${name}${labelText(tags)} ${number(state.count)}`]
  if (MetricState.isGaugeState(state)) return [`${name}${labelText(tags)} ${number(state.value)}`]
  if (MetricState.isFrequencyState(state)) {
    return [...state.occurrences].map(([key, n]) => `${name}${labelText(tags, ["key", key])} ${number(n)}`)
  }
  if (MetricState.isHistogramState(state)) {
    return [
      ...state.buckets.map(([boundary, n]) =>
        `${name}_bucket${labelText(tags, ["le", boundary === null || boundary === Infinity ? "+Inf" : String(boundary)])} ${number(n)}`
      ),
      `${name}_sum${labelText(tags)} ${number(state.sum)}`,
      `${name}_count${labelText(tags)} ${number(state.count)}`
    ]
  }
  if (MetricState.isSummaryState(state)) {
    return [
      ...state.quantiles.map(([q, value]) =>
        `${name}${labelText(tags, ["quantile", String(q)])} ${number(Option.getOrElse(value, () => NaN))}`
      ),
      `${name}_sum${labelText(tags)} ${number(state.sum)}`,
      `${name}_count${labelText(tags)} ${number(state.count)}`
    ]
  }
  return []
}

/** Renders metric pairs (default: a snapshot of the registry now), families sorted by name. */
export const renderPrometheus = (pairs: ReadonlyArray<MetricPair.MetricPair.Untyped> = Metric.unsafeSnapshot()): string => {
  const families = new Map<string, Family>()
  for (const pair of pairs) {
    const name = metricName(pair.metricKey.name)
    let family = families.get(name)
    if (family === undefined) {
      const help = Option.getOrElse(pair.metricKey.description, () => name)
      family = { type: typeOf(pair.metricState), help, series: [] }
      families.set(name, family)
    }
    family.series.push({ key: labelText(pair.metricKey.tags), pair })
  }
  const out: Array<string> = []
  for (const name of [...families.keys()].sort()) {
    const family = families.get(name)!
    out.push(`# HELP ${name} ${escapeHelp(family.help)}`, `# TYPE ${name} ${family.type}`)
    family.series.sort((a, b) => a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
    for (const { pair } of family.series) out.push(...seriesLines(name, pair))
  }
  return out.length === 0 ? "" : `${out.join("\n")}\n`
}
