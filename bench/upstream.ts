/**
 * The benchmarks' upstream: a lean OpenAI-compatible chat-completions server (node:http, no request log) answering
 * every letter request with the letter "A" and its log-probabilities, usage counted as ceil(bytes / 4). Its latency
 * is set by `LATENCY_MS` and changed at run time with `POST /__latency?ms=N`. Run as its own process, so it does
 * not share an event loop with the service or the load generator.
 */
import { createServer } from "node:http"

let latency = Number(process.env.LATENCY_MS ?? 0)
let counter = 0

const answer = (promptTokens: number) => {
  counter += 1
  return JSON.stringify({
    id: `chatcmpl-bench-${counter}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: "bench",
    choices: [{
      index: 0,
      message: { role: "assistant", content: "A" },
      logprobs: {
        content: [{
          token: "A",
          logprob: Math.log(0.8),
          bytes: [65],
          top_logprobs: [
            { token: "A", logprob: Math.log(0.8), bytes: [65] },
            { token: "B", logprob: Math.log(0.15), bytes: [66] },
            { token: "C", logprob: Math.log(0.05), bytes: [67] }
          ]
        }]
      },
      finish_reason: "length"
    }],
    usage: { prompt_tokens: promptTokens, completion_tokens: 1, total_tokens: promptTokens + 1 }
  })
}

createServer((request, response) => {
  if (request.url?.startsWith("/__latency") === true) {
    latency = Number(new URL(request.url, "http://x").searchParams.get("ms") ?? 0)
    response.writeHead(204).end()
    return
  }
  if (request.url === "/healthz") {
    response.writeHead(200).end("ok")
    return
  }
  let bytes = 0
  request.on("data", (chunk: Buffer) => (bytes += chunk.length))
  request.on("end", () => {
    const body = answer(Math.ceil(bytes / 4))
    const reply = () => response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body)
    if (latency > 0) setTimeout(reply, latency)
    else reply()
  })
}).listen(Number(process.env.PORT), process.env.HOST ?? "127.0.0.1")
