/**
 * `npm run bench:upstream-client`: what the service's upstream client adds over the upstream's own time. One letter
 * read of a ~1.2 KB state through the OpenAI-compatible provider (src/providers/OpenAiCompatible.ts: request built by
 * LetterReadout, posted by HttpPost, answer parsed, the call reported), beside the same request body posted with a
 * bare `node:http` keep-alive client that only parses the answer, one call at a time, to the benchmarks' upstream
 * (bench/upstream.ts, its own process, answering at once), in alternating blocks of `BENCH_CALLS` calls (default
 * 2,000) for `BENCH_ROUNDS` rounds (default 3). Tracing is off, as in a service with no exporter. Prints the latency
 * (p50, mean) and the CPU per call of each, and the provider's excess over the bare client in the same round.
 */
import { Layer, ManagedRuntime, References } from "effect"
import { Agent, request } from "node:http"
import { letterRequest } from "../src/providers/LetterReadout.js"
import { ModelProvider, type Read } from "../src/providers/ModelProvider.js"
import { OpenAiCompatible } from "../src/providers/OpenAiCompatible.js"
import { startNode } from "./support/Processes.js"

const calls = Number(process.env.BENCH_CALLS ?? 2_000)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)

const read: Read = {
  state: "Hello, I am writing about order 84-1192. ".repeat(30).slice(0, 1_200),
  context: [],
  instructions: "Does the customer ask for a refund of a duplicate charge?",
  type: "noul",
  options: [{ name: "yes", description: null }, { name: "no", description: null }],
  thinkTokens: 0
}

interface Figures {
  readonly p50: number
  readonly mean: number
  readonly cpu: number
}

/** `n` calls one after another: latency percentiles from the first pass, CPU per call from a second. */
const measure = async (call: () => Promise<unknown>, n: number): Promise<Figures> => {
  const times: Array<number> = []
  for (let i = 0; i < n; i++) {
    const started = performance.now()
    await call()
    times.push(performance.now() - started)
  }
  times.sort((a, b) => a - b)
  const before = process.cpuUsage()
  for (let i = 0; i < n; i++) await call()
  const used = process.cpuUsage(before)
  return {
    p50: times[n >> 1]!,
    mean: times.reduce((sum, ms) => sum + ms, 0) / n,
    cpu: (used.user + used.system) / 1000 / n
  }
}

const show = (label: string, figures: Figures) =>
  `${label.padEnd(22)} p50 ${figures.p50.toFixed(3)} ms  mean ${figures.mean.toFixed(3)} ms  CPU ${figures.cpu.toFixed(3)} ms per call`

const main = async () => {
  const upstream = await startNode("bench/upstream.ts", { LATENCY_MS: "0" })
  const runtime = ManagedRuntime.make(Layer.merge(
    OpenAiCompatible.layer({ baseUrl: `${upstream.url}/v1`, apiKey: undefined, model: "bench" }),
    Layer.succeed(References.TracerEnabled, false)
  ))
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  try {
    const body = JSON.stringify(letterRequest("bench", read, null))
    const bare = () =>
      new Promise<void>((resolve, reject) => {
        const post = request(`${upstream.url}/v1/chat/completions`, {
          method: "POST",
          agent,
          headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }
        }, (response) => {
          const chunks: Array<Buffer> = []
          response.on("data", (chunk: Buffer) => chunks.push(chunk))
          response.on("end", () => {
            JSON.parse(Buffer.concat(chunks).toString("utf8"))
            resolve()
          })
          response.on("error", reject)
        })
        post.on("error", reject)
        post.end(body)
      })
    const provider = await runtime.runPromise(ModelProvider)
    const throughProvider = () => runtime.runPromise(provider.read(read, { deadline: Date.now() + 10_000 }))
    console.log(`one call at a time, ${calls} calls per block, upstream answering at once (${upstream.url})`)
    for (let round = 1; round <= rounds; round++) {
      const direct = await measure(bare, calls)
      const client = await measure(throughProvider, calls)
      console.log(`round ${round}\n  ${show("bare node:http POST", direct)}\n  ${show("provider read", client)}`)
      console.log(`  the provider adds      p50 ${(client.p50 - direct.p50).toFixed(3)} ms  mean ` +
        `${(client.mean - direct.mean).toFixed(3)} ms  CPU ${(client.cpu - direct.cpu).toFixed(3)} ms per call ` +
        "(target: well under 0.3 ms)")
    }
  } finally {
    agent.destroy()
    await runtime.dispose()
    await upstream.stop()
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
