/**
 * A closed-loop load generator for the benchmarks: N connections (keep-alive) each sending the next request as soon
 * as the previous answer arrives, for a fixed time after a warm-up. Records every latency; reports throughput and
 * percentiles. Runs in the benchmark's own process, apart from the servers under test.
 */
import { Agent, request } from "node:http"
import { monitorEventLoopDelay } from "node:perf_hooks"

/** One request to send (built per request, so bodies and headers can vary). */
export interface LoadRequest {
  readonly method: string
  readonly path: string
  readonly headers?: Record<string, string>
  readonly body?: string
}

/** What a load run measured. */
export interface LoadResult {
  readonly requests: number
  readonly errors: number
  readonly statuses: Record<number, number>
  readonly seconds: number
  readonly perSecond: number
  readonly p50: number
  readonly p99: number
  readonly mean: number
  readonly serverTiming: Record<string, { readonly p50: number; readonly p99: number }>
  /** CPU time (ms) each `cpu` probe counted over the measured window (warm-up excluded), per request. */
  readonly cpuPerRequest: Record<string, number>
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

const parseServerTiming = (header: string | undefined, into: Map<string, Array<number>>) => {
  if (header === undefined) return
  for (const part of header.split(",")) {
    const match = /^\s*([A-Za-z0-9_-]+);dur=([0-9.]+)/.exec(part)
    if (match === null) continue
    const list = into.get(match[1]!) ?? []
    list.push(Number(match[2]))
    into.set(match[1]!, list)
  }
}

const sendOne = (agent: Agent, baseUrl: URL, make: () => LoadRequest) =>
  new Promise<{ status: number; ms: number; timing: string | undefined }>((resolve, reject) => {
    const spec = make()
    const started = performance.now()
    const req = request(
      {
        agent,
        host: baseUrl.hostname,
        port: baseUrl.port,
        method: spec.method,
        path: spec.path,
        headers: {
          ...spec.headers,
          ...(spec.body === undefined ? {} : { "content-length": String(Buffer.byteLength(spec.body)) })
        }
      },
      (res) => {
        res.resume()
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            ms: performance.now() - started,
            timing: res.headers["server-timing"] as string | undefined
          }))
      }
    )
    req.on("error", reject)
    if (spec.body !== undefined) req.write(spec.body)
    req.end()
  })

/** Runs a closed loop of `connections` for `seconds` (after `warmupSeconds`) against a base URL. */
export const runLoad = async (options: {
  readonly baseUrl: string
  readonly connections: number
  readonly seconds: number
  readonly warmupSeconds?: number
  readonly request: () => LoadRequest
  /** CPU probes (name to a reading in ms), read at the start and end of the measured window. */
  readonly cpu?: Record<string, () => number>
}): Promise<LoadResult> => {
  const baseUrl = new URL(options.baseUrl)
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections })
  const loop = async (until: number, record: boolean, sink: {
    latencies: Array<number>
    errors: number
    statuses: Map<number, number>
    timings: Map<string, Array<number>>
  }) => {
    while (performance.now() < until) {
      try {
        const result = await sendOne(agent, baseUrl, options.request)
        if (!record) continue
        sink.latencies.push(result.ms)
        sink.statuses.set(result.status, (sink.statuses.get(result.status) ?? 0) + 1)
        parseServerTiming(result.timing, sink.timings)
      } catch {
        if (record) sink.errors++
      }
    }
  }
  const warm = { latencies: [], errors: 0, statuses: new Map(), timings: new Map() }
  const warmUntil = performance.now() + (options.warmupSeconds ?? 2) * 1000
  await Promise.all(Array.from({ length: options.connections }, () => loop(warmUntil, false, warm)))
  const sink = { latencies: [] as Array<number>, errors: 0, statuses: new Map<number, number>(), timings: new Map() }
  const probes = Object.entries(options.cpu ?? {})
  const cpuBefore = probes.map(([, read]) => read())
  const started = performance.now()
  const until = started + options.seconds * 1000
  await Promise.all(Array.from({ length: options.connections }, () => loop(until, true, sink)))
  const seconds = (performance.now() - started) / 1000
  const cpuPerRequest = Object.fromEntries(
    probes.map(([name, read], index) => [name, (read() - cpuBefore[index]!) / Math.max(1, sink.latencies.length)])
  )
  agent.destroy()
  const sorted = [...sink.latencies].sort((a, b) => a - b)
  const serverTiming: Record<string, { p50: number; p99: number }> = {}
  for (const [name, values] of sink.timings) {
    const ordered = [...values].sort((a, b) => a - b)
    serverTiming[name] = { p50: percentile(ordered, 50), p99: percentile(ordered, 99) }
  }
  return {
    requests: sorted.length,
    errors: sink.errors,
    statuses: Object.fromEntries(sink.statuses),
    seconds,
    perSecond: sorted.length / seconds,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.reduce((sum, ms) => sum + ms, 0) / Math.max(1, sorted.length),
    serverTiming,
    cpuPerRequest
  }
}

/** What an open-loop run measured. */
export interface OpenLoopResult {
  readonly sent: number
  readonly answered: number
  readonly errors: number
  readonly statuses: Record<number, number>
  readonly p50: number
  readonly p99: number
  readonly max: number
  /** Answers that came later than `lateAfterMs`. */
  readonly late: number
  /** Late answers by status. */
  readonly lateByStatus: Record<number, number>
  /**
   * The load generator's own event-loop delay while it sent and waited (ms, p99 and max): a late answer can be late
   * on this side too (an answer read late, a send made late), since the generator shares the machine.
   */
  readonly generatorLag: { readonly p99: number; readonly max: number }
  /** Connections the generator opened (each one an accept and a handshake for the service too). */
  readonly connections: number
  /**
   * The service's own `Server-Timing` total (ms, p50 and max) of the late answers: small beside their latency, the
   * requests waited before the service read them; as large, they waited inside it.
   */
  readonly lateServerTotal: { readonly p50: number; readonly max: number }
  /** The late answers' `Server-Timing` parts (ms, p50 and max by part): where in the service they waited. */
  readonly lateServerParts: Record<string, { readonly p50: number; readonly max: number }>
  /** When the late requests were sent (ms after the first, first and last): a first wave, or all along. */
  readonly lateSentAt: { readonly first: number; readonly last: number }
}

/**
 * Sends requests at a fixed rate whatever the answers (an open loop, as clients under overload do) for `seconds`,
 * then waits for every answer; counts answers later than `lateAfterMs`.
 */
export const runOpenLoop = async (options: {
  readonly baseUrl: string
  readonly ratePerSecond: number
  readonly seconds: number
  readonly lateAfterMs: number
  readonly request: () => LoadRequest
}): Promise<OpenLoopResult> => {
  const baseUrl = new URL(options.baseUrl)
  const agent = new Agent({ keepAlive: true, maxSockets: 2_048 })
  let connections = 0
  const connect = agent.createConnection.bind(agent)
  agent.createConnection = (...args: Parameters<Agent["createConnection"]>) => {
    connections += 1
    return connect(...args)
  }
  const lag = monitorEventLoopDelay({ resolution: 10 })
  lag.enable()
  const latencies: Array<number> = []
  const statuses = new Map<number, number>()
  const lateByStatus = new Map<number, number>()
  const lateTimings = new Map<string, Array<number>>()
  let errors = 0
  const lateSentAt = { first: Infinity, last: -Infinity }
  const pending: Array<Promise<void>> = []
  const started = performance.now()
  const total = Math.round(options.ratePerSecond * options.seconds)
  for (let index = 0; index < total; index++) {
    const due = started + (index * 1000) / options.ratePerSecond
    const wait = due - performance.now()
    if (wait > 1) await new Promise((wake) => setTimeout(wake, wait))
    const sentAt = performance.now() - started
    pending.push(
      sendOne(agent, baseUrl, options.request).then(
        (result) => {
          latencies.push(result.ms)
          statuses.set(result.status, (statuses.get(result.status) ?? 0) + 1)
          if (result.ms > options.lateAfterMs) {
            lateByStatus.set(result.status, (lateByStatus.get(result.status) ?? 0) + 1)
            parseServerTiming(result.timing, lateTimings)
            lateSentAt.first = Math.min(lateSentAt.first, sentAt)
            lateSentAt.last = Math.max(lateSentAt.last, sentAt)
          }
        },
        () => void (errors += 1)
      )
    )
  }
  await Promise.all(pending)
  lag.disable()
  agent.destroy()
  const sorted = [...latencies].sort((a, b) => a - b)
  const lateParts = new Map([...lateTimings].map(([name, values]) => [name, [...values].sort((a, b) => a - b)]))
  const lateTotals = lateParts.get("total") ?? []
  return {
    lateServerParts: Object.fromEntries([...lateParts].map(([name, values]) => [name, { p50: percentile(values, 50), max: values.at(-1) ?? NaN }])),
    lateSentAt,
    generatorLag: { p99: lag.percentile(99) / 1e6, max: lag.max / 1e6 },
    lateServerTotal: { p50: percentile(lateTotals, 50), max: lateTotals.at(-1) ?? NaN },
    connections,
    sent: total,
    answered: sorted.length,
    errors,
    statuses: Object.fromEntries(statuses),
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? NaN,
    late: sorted.filter((ms) => ms > options.lateAfterMs).length,
    lateByStatus: Object.fromEntries(lateByStatus)
  }
}
