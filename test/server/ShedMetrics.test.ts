/**
 * Shed requests are counted (src/server/Overload.ts): `arbiter_http_shed_total` by route and reason, and as 503s in
 * the request and run metrics; the guard's in-flight count and limit are gauges.
 */
import { assert, describe, it } from "@effect/vitest"
import { renderPrometheus } from "../../src/telemetry/Prometheus.js"
import { startGuardedServer } from "../support/GuardedServer.js"

const sample = (text: string, series: string): number => {
  const line = text.split("\n").find((row) => row.startsWith(`${series} `))
  return line === undefined ? 0 : Number(line.slice(series.length + 1))
}

describe("shed requests in the metrics", () => {
  it("counts each shed request by route and reason, and as a 503 run answer", async () => {
    const { guard, held, base, heldMoreThan, close } = await startGuardedServer(1)
    const shedSeries = `arbiter_http_shed_total{route="/v1/router/select",reason="limit"}`
    const requestSeries = `arbiter_http_requests_total{method="POST",route="/v1/router/select",status="503"}`
    const runSeries = `arbiter_runs_total{route="/v1/router/select",outcome="shed",code="no_route_available"}`
    const before = renderPrometheus()
    try {
      const first = fetch(`${base}/v1/runs`, { method: "POST", body: "{}" })
      await heldMoreThan(0)
      for (let i = 0; i < 2; i++) {
        assert.strictEqual((await fetch(`${base}/v1/router/select`, { method: "POST", body: "{}" })).status, 503)
      }
      const after = renderPrometheus()
      assert.strictEqual(sample(after, shedSeries), sample(before, shedSeries) + 2)
      assert.strictEqual(sample(after, requestSeries), sample(before, requestSeries) + 2)
      assert.strictEqual(sample(after, runSeries), sample(before, runSeries) + 2)
      assert.strictEqual(guard.inFlight(), 1)
      held.splice(0).forEach((response) => response.end("ok"))
      assert.strictEqual((await first).status, 200)
    } finally {
      await close()
    }
  })
})
