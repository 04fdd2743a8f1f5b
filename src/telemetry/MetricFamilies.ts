/**
 * Metrics as plain data, the form they take between the registry and the Prometheus text: families of series, each
 * a counter, a gauge or a histogram, with nothing in them but strings and finite numbers, so a worker can send its
 * own to the primary over node:cluster's IPC channel (JSON) and the primary can add up those of every worker.
 * Only the service's own families (`arbiter_*`) are taken from Effect's registry: Effect's internal series
 * (`child_fibers_*` and any other it registers) follow no Prometheus naming and are dropped. Frequencies become
 * counters with a `key` label; summaries are not exported (their quantiles cannot be added up across processes; the
 * service defines none).
 */
import type { Metric } from "effect"

/** A series' labels, by name. */
export type SeriesLabels = Readonly<Record<string, string>>

/** One series of a counter or a gauge. */
export interface ValueSeries {
  readonly labels: SeriesLabels
  readonly value: number
}

/** One series of a histogram: cumulative counts at each finite upper bound (`le`), then its sum and its count. */
export interface HistogramSeries {
  readonly labels: SeriesLabels
  readonly bounds: ReadonlyArray<number>
  readonly counts: ReadonlyArray<number>
  readonly sum: number
  readonly count: number
}

/** A metric family: its name, help text, type and series. */
export type Family =
  | {
    readonly type: "counter" | "gauge"
    readonly name: string
    readonly help: string
    readonly series: ReadonlyArray<ValueSeries>
  }
  | {
    readonly type: "histogram"
    readonly name: string
    readonly help: string
    readonly series: ReadonlyArray<HistogramSeries>
  }

/** The prefix of the service's own families, the only ones taken from Effect's registry. */
export const ServicePrefix = "arbiter_"

const ValidName = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/

const toNumber = (value: number | bigint): number => typeof value === "bigint" ? Number(value) : value

type Building = { type: Family["type"]; name: string; help: string; series: Array<ValueSeries | HistogramSeries> }

const seriesOfSnapshot = (snapshot: Metric.Metric.Snapshot): ReadonlyArray<ValueSeries | HistogramSeries> => {
  const labels: SeriesLabels = { ...snapshot.attributes }
  switch (snapshot.type) {
    case "Counter":
      return [{ labels, value: toNumber(snapshot.state.count) }]
    case "Gauge":
      return [{ labels, value: toNumber(snapshot.state.value) }]
    case "Frequency":
      return [...snapshot.state.occurrences].map(([key, n]) => ({ labels: { ...labels, key }, value: n }))
    case "Histogram": {
      const finite = snapshot.state.buckets.filter(([bound]) => Number.isFinite(bound))
      return [{
        labels,
        bounds: finite.map(([bound]) => bound),
        counts: finite.map(([, n]) => n),
        sum: snapshot.state.sum,
        count: snapshot.state.count
      }]
    }
    case "Summary":
      return []
  }
}

const typeOfSnapshot = (snapshot: Metric.Metric.Snapshot): Family["type"] =>
  snapshot.type === "Gauge" ? "gauge" : snapshot.type === "Histogram" ? "histogram" : "counter"

/** The service's families (`arbiter_*`, valid Prometheus names) in metric snapshots, sorted by name. */
export const familiesOf = (snapshots: ReadonlyArray<Metric.Metric.Snapshot>): Array<Family> => {
  const families = new Map<string, Building>()
  for (const snapshot of snapshots) {
    if (!snapshot.id.startsWith(ServicePrefix) || !ValidName.test(snapshot.id) || snapshot.type === "Summary") continue
    let family = families.get(snapshot.id)
    if (family === undefined) {
      family = { type: typeOfSnapshot(snapshot), name: snapshot.id, help: snapshot.description ?? snapshot.id, series: [] }
      families.set(snapshot.id, family)
    }
    family.series.push(...seriesOfSnapshot(snapshot))
  }
  return [...families.values()].sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0) as Array<Family>
}

/** A series' identity within its family: its labels, sorted by name. */
export const seriesKey = (labels: SeriesLabels): string =>
  JSON.stringify(Object.keys(labels).sort().map((name) => [name, labels[name]]))

const addHistograms = (a: HistogramSeries, b: HistogramSeries): HistogramSeries => {
  if (a.bounds.length !== b.bounds.length || a.bounds.some((bound, i) => bound !== b.bounds[i])) return a
  return {
    labels: a.labels,
    bounds: a.bounds,
    counts: a.counts.map((n, i) => n + b.counts[i]!),
    sum: a.sum + b.sum,
    count: a.count + b.count
  }
}

/**
 * The sum of several processes' families: a series present in several is one series whose value (counter, gauge)
 * or counts and sum (histogram) are added up; a series present in one is kept as it is. Families are matched by
 * name, and the first one seen sets the type and help.
 */
export const addFamilies = (sets: ReadonlyArray<ReadonlyArray<Family>>): Array<Family> => {
  const families = new Map<string, { readonly family: Family; readonly series: Map<string, ValueSeries | HistogramSeries> }>()
  for (const set of sets) {
    for (const family of set) {
      let found = families.get(family.name)
      if (found === undefined) {
        found = { family, series: new Map() }
        families.set(family.name, found)
      }
      if (found.family.type !== family.type) continue
      for (const series of family.series as ReadonlyArray<ValueSeries | HistogramSeries>) {
        const key = seriesKey(series.labels)
        const before = found.series.get(key)
        found.series.set(
          key,
          before === undefined
            ? series
            : "value" in before
            ? { labels: before.labels, value: before.value + (series as ValueSeries).value }
            : addHistograms(before, series as HistogramSeries)
        )
      }
    }
  }
  return [...families.values()]
    .map(({ family, series }) => ({ ...family, series: [...series.values()] }) as Family)
    .sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
}

/** Families with `extra` labels added to every series (a process's `worker` label). */
export const withLabels = (families: ReadonlyArray<Family>, extra: SeriesLabels): Array<Family> =>
  families.map((family) => ({
    ...family,
    series: (family.series as ReadonlyArray<ValueSeries | HistogramSeries>).map((series) => ({
      ...series,
      labels: { ...series.labels, ...extra }
    }))
  }) as Family)
