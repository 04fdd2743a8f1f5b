/**
 * A real HTTP server on 127.0.0.1 (random port) speaking the OpenAI-compatible chat-completions wire format, for
 * tests and benchmarks of the OpenAI-compatible provider. Each request takes the next scripted reply, or the
 * default: a letter request (`logprobs: true`) answers "A" at 0.9 and "B" at 0.1; a thought request answers a short
 * thought. Usage defaults to ceil(UTF-8 bytes of the messages' contents / 4) prompt tokens and the reply's
 * completion tokens; ids are `chatcmpl-fake-<n>` and the `x-request-id` header `req-fake-<n>`, n counting replies
 * from 1 since the start or the last reset. Every request is logged with its parsed body.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { Context, Effect, Fiber, Layer, Schedule } from "effect"

/** Token counts a reply reports. */
export interface FakeUsage {
  readonly prompt_tokens: number
  readonly completion_tokens: number
}

/** What the fake upstream does with one request. */
export type UpstreamReply =
  /**
   * 200 with the first token's top log-probabilities built from these token probabilities (the first entry is the
   * chosen token); tokens that are no option letters (`{ Hello: 1 }`) make a 200 with the letters absent.
   */
  | { readonly kind: "logprobs"; readonly top: Readonly<Record<string, number>>; readonly usage?: FakeUsage; readonly id?: string }
  /** 200 with a thought as message content and no log-probabilities. */
  | { readonly kind: "thought"; readonly text: string; readonly usage?: FakeUsage; readonly id?: string }
  /** 200 with content "A", usage, and no `logprobs` at all. */
  | { readonly kind: "noLogprobs"; readonly usage?: FakeUsage; readonly id?: string }
  /** 200 with log-probabilities but no `usage`. */
  | { readonly kind: "noUsage" }
  /** 200 whose body is not JSON. */
  | { readonly kind: "malformed" }
  /** Any status with a JSON error body (or the given text). */
  | { readonly kind: "status"; readonly status: number; readonly body?: string }
  /** No answer: for `ms` then `then` (default: the default reply), or forever when `ms` is absent. */
  | { readonly kind: "hang"; readonly ms?: number; readonly then?: UpstreamReply }
  /** Received and kept unanswered until `release`, then answered with `then`. */
  | { readonly kind: "held"; readonly then: UpstreamReply }
  /** The connection is destroyed without a response. */
  | { readonly kind: "drop" }

/** One request the fake upstream received. */
export interface ReceivedRequest {
  readonly method: string
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  /** The parsed JSON body (undefined when it was not JSON). */
  readonly body: any
  readonly at: number
}

/** Chooses the reply of a request that no scripted reply is waiting for. */
export type Responder = (request: ReceivedRequest) => UpstreamReply

/** A running fake upstream with plain (non-Effect) controls, for benchmarks. */
export interface FakeUpstreamServer {
  /** The API root, ending in `/v1`. */
  readonly url: string
  /** Queues replies for the next requests, in order. */
  readonly script: (...replies: ReadonlyArray<UpstreamReply>) => void
  /** Replaces the default behaviour. */
  readonly respondWith: (responder: Responder) => void
  /** Adds this many milliseconds before every reply. */
  readonly setLatency: (ms: number) => void
  /** The requests received so far, oldest first. */
  readonly requests: () => ReadonlyArray<ReceivedRequest>
  /** Holds every request from now on (received and logged, not answered) until `release`. */
  readonly hold: () => void
  /** Answers the held requests (and those scripted `held`) and stops holding. */
  readonly release: () => void
  /** Clears the queue, the log, the latency, the hold and the default behaviour. */
  readonly reset: () => void
  readonly close: () => Promise<void>
}

/** The default reply: "A" for a letter request, a short thought otherwise. */
export const defaultResponder: Responder = (request) =>
  request.body?.logprobs === true
    ? { kind: "logprobs", top: { A: 0.9, B: 0.1 } }
    : { kind: "thought", text: "The state points to the first option." }

const promptTokens = (body: any): number => {
  const messages: ReadonlyArray<{ content?: unknown }> = Array.isArray(body?.messages) ? body.messages : []
  const bytes = messages.reduce(
    (sum, message) => sum + (typeof message.content === "string" ? Buffer.byteLength(message.content) : 0),
    0
  )
  return Math.ceil(bytes / 4)
}

const completion = (id: string, model: unknown, content: string, logprobs: unknown, usage: FakeUsage | undefined) => ({
  id,
  object: "chat.completion",
  created: Math.floor(Date.now() / 1000),
  model: typeof model === "string" ? model : "fake",
  choices: [{ index: 0, message: { role: "assistant", content }, logprobs, finish_reason: "length" }],
  ...(usage === undefined ? {} : {
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens }
  })
})

const topLogprobs = (top: Readonly<Record<string, number>>) =>
  Object.entries(top).map(([token, p]) => ({
    token,
    logprob: Math.log(p),
    bytes: [...Buffer.from(token)]
  }))

/** Starts a fake upstream on a random port of 127.0.0.1. */
export const startFakeUpstream = async (): Promise<FakeUpstreamServer> => {
  let queue: Array<UpstreamReply> = []
  let log: Array<ReceivedRequest> = []
  let responder: Responder = defaultResponder
  let latency = 0
  let counter = 0
  let held: Array<() => void> | null = null
  // Requests whose scripted reply is `held`, answered at the next `release`.
  let heldReplies: Array<() => void> = []
  const timers = new Set<ReturnType<typeof setTimeout>>()
  const later = (ms: number, f: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer)
      f()
    }, ms)
    timers.add(timer)
  }

  const send = (
    request: ReceivedRequest,
    reply: UpstreamReply,
    response: http.ServerResponse
  ): void => {
    const sequence = ++counter
    const id = `chatcmpl-fake-${sequence}`
    const json = (status: number, value: unknown) => {
      response.writeHead(status, { "content-type": "application/json", "x-request-id": `req-fake-${sequence}` })
      response.end(JSON.stringify(value))
    }
    const defaultUsage = (completionTokens: number): FakeUsage => ({
      prompt_tokens: promptTokens(request.body),
      completion_tokens: completionTokens
    })
    switch (reply.kind) {
      case "logprobs": {
        const entries = topLogprobs(reply.top)
        const chosen = entries[0] ?? { token: "", logprob: 0, bytes: [] }
        return json(200, completion(reply.id ?? id, request.body?.model, chosen.token, {
          content: [{ ...chosen, top_logprobs: entries }]
        }, reply.usage ?? defaultUsage(1)))
      }
      case "thought":
        return json(200, completion(reply.id ?? id, request.body?.model, reply.text, null,
          reply.usage ?? defaultUsage(Math.min(request.body?.max_tokens ?? 1, reply.text.split(/\s+/).length))))
      case "noLogprobs":
        return json(200, completion(reply.id ?? id, request.body?.model, "A", null, reply.usage ?? defaultUsage(1)))
      case "noUsage":
        return json(200, completion(id, request.body?.model, "A", {
          content: [{ token: "A", logprob: 0, top_logprobs: [{ token: "A", logprob: 0 }] }]
        }, undefined))
      case "malformed":
        response.writeHead(200, { "content-type": "application/json" })
        return void response.end(`{"id": "${id}", "choices": [`)
      case "status":
        response.writeHead(reply.status, { "content-type": "application/json", "x-request-id": `req-fake-${sequence}` })
        return void response.end(reply.body ?? JSON.stringify({ error: { message: `scripted ${reply.status}` } }))
      case "hang":
        if (reply.ms !== undefined) later(reply.ms, () => send(request, reply.then ?? responder(request), response))
        return
      case "held":
        return void heldReplies.push(() => send(request, reply.then, response))
      case "drop":
        return void response.socket?.destroy()
    }
  }

  const server = http.createServer((incoming, response) => {
    const chunks: Array<Buffer> = []
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk))
    incoming.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8")
      let body: unknown
      try {
        body = JSON.parse(raw)
      } catch {
        body = undefined
      }
      const request: ReceivedRequest = {
        method: incoming.method ?? "",
        path: incoming.url ?? "",
        headers: incoming.headers,
        body,
        at: Date.now()
      }
      log.push(request)
      const reply = queue.shift() ?? responder(request)
      const answer = () => {
        if (latency > 0) later(latency, () => send(request, reply, response))
        else send(request, reply, response)
      }
      if (held !== null) held.push(answer)
      else answer()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}/v1`,
    script: (...replies) => {
      queue.push(...replies)
    },
    respondWith: (next) => {
      responder = next
    },
    setLatency: (ms) => {
      latency = ms
    },
    requests: () => [...log],
    hold: () => {
      held ??= []
    },
    release: () => {
      const waiting = [...(held ?? []), ...heldReplies]
      held = null
      heldReplies = []
      for (const answer of waiting) answer()
    },
    reset: () => {
      held = null
      heldReplies = []
      queue = []
      log = []
      counter = 0
      responder = defaultResponder
      latency = 0
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer)
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** The fake upstream as an Effect service, started for a layer's lifetime. */
export class FakeUpstream extends Context.Service<FakeUpstream, {
  readonly url: string
  readonly script: (...replies: ReadonlyArray<UpstreamReply>) => Effect.Effect<void>
  readonly respondWith: (responder: Responder) => Effect.Effect<void>
  readonly setLatency: (ms: number) => Effect.Effect<void>
  readonly requests: Effect.Effect<ReadonlyArray<ReceivedRequest>>
  readonly hold: Effect.Effect<void>
  readonly release: Effect.Effect<void>
  readonly reset: Effect.Effect<void>
}>()("test/FakeUpstream") {
  /** Starts the server when the layer is built and closes it when the layer is released. */
  static readonly layer: Layer.Layer<FakeUpstream> = Layer.effect(
    FakeUpstream,
    Effect.map(
      Effect.acquireRelease(Effect.promise(startFakeUpstream), (server) => Effect.promise(server.close)),
      (server) => ({
        url: server.url,
        script: (...replies: ReadonlyArray<UpstreamReply>) => Effect.sync(() => server.script(...replies)),
        respondWith: (responder: Responder) => Effect.sync(() => server.respondWith(responder)),
        setLatency: (ms: number) => Effect.sync(() => server.setLatency(ms)),
        requests: Effect.sync(server.requests),
        hold: Effect.sync(server.hold),
        release: Effect.sync(server.release),
        reset: Effect.sync(server.reset)
      })
    )
  )
}

/**
 * Sends a burst of runs while the upstream holds every call, and releases it only once every request has been
 * answered (refused) or has reached the upstream (admitted): no admitted run can finish, and free its unused ceiling,
 * while later ones are still being decided, however slowly the machine serves the burst. Returns the answers in
 * order and how many calls reached the upstream while it held them (one per admitted one-question run).
 */
export const heldBurst = <A, E, R>(sends: ReadonlyArray<Effect.Effect<A, E, R>>) =>
  Effect.gen(function*() {
    const upstream = yield* FakeUpstream
    const before = (yield* upstream.requests).length
    let answered = 0
    yield* upstream.hold
    const burst = yield* Effect.forkChild(Effect.forEach(
      sends,
      (send) => Effect.tap(send, () => Effect.sync(() => void (answered += 1))),
      { concurrency: "unbounded" }
    ))
    const reached = Effect.map(upstream.requests, (requests) => requests.length - before)
    yield* Effect.map(reached, (held) => held + answered).pipe(
      Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: (decided) => decided >= sends.length }),
      Effect.timeoutOption("60 seconds")
    )
    const held = yield* reached
    yield* upstream.release
    return { responses: yield* Fiber.join(burst), held }
  })
