/**
 * The process's and Node's own figures (src/telemetry/RuntimeMetrics.ts): Prometheus names and base units, GC pauses
 * by kind once the monitors run, event-loop delay never below zero (the monitor's timer period is taken off).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Family, HistogramSeries, ValueSeries } from "../../src/telemetry/MetricFamilies.js"
import { runtimeFamilies, startRuntimeMetrics } from "../../src/telemetry/RuntimeMetrics.js"

const family = (families: ReadonlyArray<Family>, name: string) => {
  const found = families.find((each) => each.name === name)
  assert.isDefined(found, name)
  return found!
}

const value = (families: ReadonlyArray<Family>, name: string) => (family(families, name).series[0] as ValueSeries).value

describe("runtimeFamilies", () => {
  it.live("process and Node figures in base units; GC pauses by kind; event-loop delay at least 0", () =>
    Effect.gen(function*() {
      startRuntimeMetrics()
      // Enough short-lived garbage to make V8 scavenge several times.
      let kept = 0
      for (let i = 0; i < 200_000; i++) kept += new Array(64).fill(i).length
      assert.strictEqual(kept, 200_000 * 64)
      let gc: ReadonlyArray<HistogramSeries> = []
      for (let i = 0; i < 500 && gc.length === 0; i++) {
        yield* Effect.sleep("10 millis")
        gc = family(runtimeFamilies(), "nodejs_gc_duration_seconds").series as ReadonlyArray<HistogramSeries>
      }
      const families = runtimeFamilies()
      assert.isAbove(value(families, "process_cpu_seconds_total"), 0)
      assert.closeTo(
        value(families, "process_cpu_seconds_total"),
        value(families, "process_cpu_user_seconds_total") + value(families, "process_cpu_system_seconds_total"),
        0.05
      )
      assert.isAbove(value(families, "process_resident_memory_bytes"), 1_000_000)
      assert.isAtMost(Math.abs(value(families, "process_start_time_seconds") - (Date.now() / 1000 - process.uptime())), 2)
      assert.isAbove(value(families, "nodejs_heap_size_used_bytes"), 0)
      for (const name of ["nodejs_eventloop_lag_seconds", "nodejs_eventloop_lag_p99_seconds", "nodejs_eventloop_lag_max_seconds"]) {
        assert.isAtLeast(value(families, name), 0, name)
      }
      assert.isAbove(gc.length, 0, "a GC pause was seen")
      for (const series of gc) {
        assert.include(["minor", "minor_mark_sweep", "major", "incremental", "weakcb"], series.labels.kind)
        assert.isAbove(series.count, 0)
        assert.isAtMost(series.counts[series.counts.length - 1]!, series.count, "buckets are cumulative and within the count")
      }
      for (const each of families) assert.match(each.name, /^(process|nodejs)_[a-z0-9_]+$/)
      assert.strictEqual(family(families, "nodejs_version_info").series[0]!.labels.version, process.version)
    }))
})
