/**
 * Shed requests are counted (src/server/Overload.ts): `arbiter_http_shed_total` by route and reason, and as 503s in
 * the request and run metrics; the guard's in-flight count and limit are gauges.
 */
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { makeCors } from "../../src/http/Cors.js"
import { startOverloadGuard } from "../../src/server/Overload.js"
import { renderPrometheus } from "../../src/telemetry/Prometheus.js"

const sample = (text: string, series: string): number => {
  const line = text.split("\n").find((row) => row.startsWith(`${series} `))
  return line === undefined ? 0 : Number(line.slice(series.length + 1))
}

describe("shed requests in the metrics", () => {
  it("counts each shed request by route and reason, and as a 503 run answer", async () => {
    const guard = startOverloadGuard({ maxLagMs: 0, maxInFlight: 1, cors: makeCors([]) })
    const held: Array<ServerResponse> = []
    const server = createServer((request, response) => {
      if (guard.shed(request, response)) return
      request.resume()
      held.push(response)
    })
    await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening))
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const shedSeries = `arbiter_http_shed_total{route="/v1/router/select",reason="limit"}`
    const requestSeries = `arbiter_http_requests_total{method="POST",route="/v1/router/select",status="503"}`
    const runSeries = `arbiter_runs_total{route="/v1/router/select",outcome="shed",code="no_route_available"}`
    const before = renderPrometheus()
    try {
      const first = fetch(`${base}/v1/runs`, { method: "POST", body: "{}" })
      while (held.length === 0) await new Promise((wake) => setTimeout(wake, 5))
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
      guard.stop()
      held.forEach((response) => response.end())
      await new Promise((closed) => server.close(closed))
    }
  })
})
