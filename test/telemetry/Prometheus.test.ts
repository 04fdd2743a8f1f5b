/** The Prometheus text rendering of Effect metrics: types, help, label escaping, histogram buckets in order. */
import { assert, describe, it } from "@effect/vitest"
import { Metric } from "effect"
import { labels, record, snapshotMetrics } from "../../src/telemetry/Metrics.js"
import { renderPrometheus } from "../../src/telemetry/Prometheus.js"

describe("renderPrometheus", () => {
  it("renders counters, gauges and histograms with escaped labels and cumulative buckets in order", () => {
    const requests = Metric.counter("render_test_requests_total", { description: "Requests\nby route" })
    const depth = Metric.gauge("render.test.depth")
    const latency = Metric.histogram("render_test_seconds", { boundaries: Metric.boundariesFromIterable([0.5, 1, 10]), description: "Latency" })
    const tags = labels({ route: "/a\"b\\c", status: "200" })
    record(requests, 2, tags)
    record(depth, 7, labels({}))
    for (const value of [0.2, 0.7, 3, 30]) record(latency, value, labels({ route: "/x" }))
    const mine = snapshotMetrics().filter((snapshot) => snapshot.id.startsWith("render"))
    assert.strictEqual(renderPrometheus(mine), [
      "# HELP render_test_depth render_test_depth",
      "# TYPE render_test_depth gauge",
      "render_test_depth 7",
      "# HELP render_test_requests_total Requests\\nby route",
      "# TYPE render_test_requests_total counter",
      "render_test_requests_total{route=\"/a\\\"b\\\\c\",status=\"200\"} 2",
      "# HELP render_test_seconds Latency",
      "# TYPE render_test_seconds histogram",
      "render_test_seconds_bucket{route=\"/x\",le=\"0.5\"} 1",
      "render_test_seconds_bucket{route=\"/x\",le=\"1\"} 2",
      "render_test_seconds_bucket{route=\"/x\",le=\"10\"} 3",
      "render_test_seconds_bucket{route=\"/x\",le=\"+Inf\"} 4",
      "render_test_seconds_sum{route=\"/x\"} 33.9",
      "render_test_seconds_count{route=\"/x\"} 4",
      ""
    ].join("\n"))
  })

  it("renders nothing for no metrics", () => {
    assert.strictEqual(renderPrometheus([]), "")
  })
})
