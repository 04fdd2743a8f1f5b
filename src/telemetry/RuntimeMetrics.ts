/**
 * The process's and Node's own figures, under the names Prometheus's client libraries use (`process_*`, `nodejs_*`),
 * in base units (seconds, bytes): CPU time, resident memory, start time, open file descriptors, heap, event-loop
 * delay, garbage collection and active resources. Read from Node's APIs at each scrape (they cost a few system calls),
 * outside Effect's registry, so the primary of a cluster, which runs no Effect runtime, reports its own the same way.
 * The event-loop delay and GC figures need a monitor each, started once by `startRuntimeMetrics` (only when metrics
 * are served).
 */
import { readdirSync } from "node:fs"
import { constants, monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks"
import type { Family, HistogramSeries } from "./MetricFamilies.js"

/** Upper bounds of the GC pause histogram, in seconds. */
export const GcSecondsBuckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]

type IntervalHistogram = ReturnType<typeof monitorEventLoopDelay>

/** How often the event-loop monitor's timer fires, in ms: what it records is the time between two firings. */
const DelayResolutionMs = 20

/** The `kind` label of a GC entry's `detail.kind`. */
const GcKinds: ReadonlyMap<number, string> = new Map([
  [constants.NODE_PERFORMANCE_GC_MINOR, "minor"],
  [constants.NODE_PERFORMANCE_GC_MINOR_MARK_SWEEP, "minor_mark_sweep"],
  [constants.NODE_PERFORMANCE_GC_MAJOR, "major"],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, "incremental"],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, "weakcb"]
])

interface Monitors {
  readonly delay: IntervalHistogram
  readonly gc: Map<string, { counts: Array<number>; sum: number; count: number }>
}

let monitors: Monitors | undefined

/** Starts the event-loop delay and GC monitors (once per process; later calls do nothing). */
export const startRuntimeMetrics = (): void => {
  if (monitors !== undefined) return
  const delay = monitorEventLoopDelay({ resolution: DelayResolutionMs })
  delay.enable()
  const gc = new Map<string, { counts: Array<number>; sum: number; count: number }>()
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = GcKinds.get(((entry as { readonly detail?: unknown }).detail as { kind?: number } | undefined)?.kind ?? 0) ?? "other"
      const seconds = entry.duration / 1000
      let state = gc.get(kind)
      if (state === undefined) {
        state = { counts: GcSecondsBuckets.map(() => 0), sum: 0, count: 0 }
        gc.set(kind, state)
      }
      GcSecondsBuckets.forEach((bound, i) => seconds <= bound && state.counts[i]!++)
      state.sum += seconds
      state.count++
    }
  })
  observer.observe({ entryTypes: ["gc"] })
  monitors = { delay, gc }
}

const gauge = (name: string, help: string, value: number): Family => ({ type: "gauge", name, help, series: [{ labels: {}, value }] })
const counter = (name: string, help: string, value: number): Family => ({ type: "counter", name, help, series: [{ labels: {}, value }] })

/** Open file descriptors, where the system lists them (`/proc/self/fd`); undefined elsewhere. */
const openFds = (): number | undefined => {
  try {
    return readdirSync("/proc/self/fd").length
  } catch {
    return undefined
  }
}

const processFamilies = (rss: number): Array<Family> => {
  const cpu = process.cpuUsage()
  const fds = openFds()
  return [
    counter("process_cpu_user_seconds_total", "User CPU time spent by the process, in seconds", cpu.user / 1e6),
    counter("process_cpu_system_seconds_total", "System CPU time spent by the process, in seconds", cpu.system / 1e6),
    counter("process_cpu_seconds_total", "User and system CPU time spent by the process, in seconds", (cpu.user + cpu.system) / 1e6),
    gauge("process_resident_memory_bytes", "Resident memory of the process, in bytes", rss),
    gauge(
      "process_start_time_seconds",
      "Start time of the process since the Unix epoch, in seconds",
      Math.round(Date.now() / 1000 - process.uptime())
    ),
    ...(fds === undefined ? [] : [gauge("process_open_fds", "Open file descriptors of the process", fds)])
  ]
}

const activeResources = (): Family => {
  const byType = new Map<string, number>()
  for (const type of process.getActiveResourcesInfo()) byType.set(type, (byType.get(type) ?? 0) + 1)
  return {
    type: "gauge",
    name: "nodejs_active_resources",
    help: "Resources keeping the event loop alive (handles, requests, timers), by type",
    series: [...byType].map(([type, value]) => ({ labels: { type }, value }))
  }
}

/**
 * The event-loop delay since the previous read (the monitor restarts at each read), in seconds: the monitor records
 * the time between firings of its timer, so the delay is that time less the timer's period.
 */
const delayFamilies = (delay: IntervalHistogram): Array<Family> => {
  const seconds = (nanos: number) =>
    Number.isFinite(nanos) && delay.count > 0 ? Math.max(0, nanos / 1e6 - DelayResolutionMs) / 1000 : 0
  const families = [
    gauge("nodejs_eventloop_lag_seconds", "Mean event-loop delay since the previous scrape, in seconds", seconds(delay.mean)),
    gauge("nodejs_eventloop_lag_p50_seconds", "Median event-loop delay since the previous scrape, in seconds", seconds(delay.percentile(50))),
    gauge("nodejs_eventloop_lag_p99_seconds", "99th percentile event-loop delay since the previous scrape, in seconds", seconds(delay.percentile(99))),
    gauge("nodejs_eventloop_lag_max_seconds", "Longest event-loop delay since the previous scrape, in seconds", seconds(delay.max))
  ]
  delay.reset()
  return families
}

const gcFamily = (gc: Monitors["gc"]): Family => ({
  type: "histogram",
  name: "nodejs_gc_duration_seconds",
  help: "Garbage collection pauses, in seconds, by kind (minor, minor_mark_sweep, major, incremental, weakcb)",
  series: [...gc].map(([kind, state]): HistogramSeries => ({
    labels: { kind },
    bounds: GcSecondsBuckets,
    counts: [...state.counts],
    sum: state.sum,
    count: state.count
  }))
})

/** The process's and Node's figures now. */
export const runtimeFamilies = (): Array<Family> => {
  const memory = process.memoryUsage()
  const families: Array<Family> = [
    ...processFamilies(memory.rss),
    gauge("nodejs_heap_size_used_bytes", "V8 heap in use, in bytes", memory.heapUsed),
    gauge("nodejs_heap_size_total_bytes", "V8 heap allocated, in bytes", memory.heapTotal),
    gauge("nodejs_external_memory_bytes", "Memory of C++ objects bound to JavaScript objects, in bytes", memory.external),
    activeResources(),
    { type: "gauge", name: "nodejs_version_info", help: "The Node.js version", series: [{ labels: { version: process.version }, value: 1 }] }
  ]
  if (monitors !== undefined) families.push(...delayFamilies(monitors.delay), gcFamily(monitors.gc))
  return families
}
