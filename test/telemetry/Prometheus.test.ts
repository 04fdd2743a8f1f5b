/**
 * The Prometheus text rendering of Effect metrics: types, help, label escaping, histogram buckets in order; only the
 * service's own families (`arbiter_*`, valid names) are rendered, Effect's internal ones and invalid names dropped.
 */
import { assert, describe, it } from "@effect/vitest"
import { counter, gauge, histogram, labels, record, snapshotMetrics } from "../../src/telemetry/Metrics.js"
import { renderPrometheus } from "../../src/telemetry/Prometheus.js"

describe("renderPrometheus", () => {
  it("renders counters, gauges and histograms with escaped labels and cumulative buckets in order", () => {
    const requests = counter("arbiter_render_test_requests_total", "Requests\nby route")
    const depth = gauge("arbiter_render_test_depth")
    const latency = histogram("arbiter_render_test_seconds", "Latency", [0.5, 1, 10])
    const tags = labels({ route: "/a\"b\\c", status: "200" })
    record(requests, 2, tags)
    record(depth, 7, labels({}))
    for (const value of [0.2, 0.7, 3, 30]) record(latency, value, labels({ route: "/x" }))
    const mine = snapshotMetrics().filter((snapshot) => snapshot.id.startsWith("arbiter_render"))
    assert.strictEqual(renderPrometheus(mine), [
      "# HELP arbiter_render_test_depth arbiter_render_test_depth",
      "# TYPE arbiter_render_test_depth gauge",
      "arbiter_render_test_depth 7",
      "# HELP arbiter_render_test_requests_total Requests\\nby route",
      "# TYPE arbiter_render_test_requests_total counter",
      "arbiter_render_test_requests_total{route=\"/a\\\"b\\\\c\",status=\"200\"} 2",
      "# HELP arbiter_render_test_seconds Latency",
      "# TYPE arbiter_render_test_seconds histogram",
      "arbiter_render_test_seconds_bucket{route=\"/x\",le=\"0.5\"} 1",
      "arbiter_render_test_seconds_bucket{route=\"/x\",le=\"1\"} 2",
      "arbiter_render_test_seconds_bucket{route=\"/x\",le=\"10\"} 3",
      "arbiter_render_test_seconds_bucket{route=\"/x\",le=\"+Inf\"} 4",
      "arbiter_render_test_seconds_sum{route=\"/x\"} 33.9",
      "arbiter_render_test_seconds_count{route=\"/x\"} 4",
      ""
    ].join("\n"))
  })

  it("drops Effect's internal series and names Prometheus does not accept", () => {
    record(counter("child_fibers_started"), 1, labels({}))
    record(gauge("effect_fiber_active"), 3, labels({}))
    record(gauge("arbiter.dotted.depth"), 1, labels({}))
    record(counter("arbiter_render_kept_total"), 1, labels({}))
    const text = renderPrometheus(snapshotMetrics())
    assert.notInclude(text, "child_fibers")
    assert.notInclude(text, "effect_fiber")
    assert.notInclude(text, "dotted")
    assert.include(text, "arbiter_render_kept_total 1")
    for (const line of text.split("\n").filter((line) => line !== "" && !line.startsWith("#"))) {
      assert.match(line, /^arbiter_[a-zA-Z0-9_:]*(\{.*\})? \S+$/)
    }
  })

  it("renders nothing for no metrics", () => {
    assert.strictEqual(renderPrometheus([]), "")
  })
})
