import { assert, describe, it } from "@effect/vitest"
import {
  letterPrompt,
  letterRequest,
  parseLetterResponse,
  parseThoughtResponse,
  letterPromptBytes as promptBytes,
  thinkPrompt,
  thinkRequest
} from "../../src/providers/LetterReadout.js"
import type { Read } from "../../src/providers/ModelProvider.js"

const read: Read = {
  state: "customer: Ada\nissue: refund",
  context: [{ question: "urgent", instructions: "The message is urgent", answer: "yes (probability 0.91)" }],
  instructions: "Which team handles it?",
  type: "choice",
  options: [
    { name: "billing", description: "payments and refunds" },
    { name: "support", description: null },
    { name: "sales", description: "new contracts" }
  ],
  thinkTokens: 0
}

const body = (value: unknown) => JSON.stringify(value)
const withTop = (top: ReadonlyArray<readonly [string, number]>, extra: Record<string, unknown> = {}) =>
  body({
    id: "chatcmpl-1",
    choices: [{
      message: { role: "assistant", content: top[0]?.[0] ?? "" },
      logprobs: {
        content: [{
          token: top[0]?.[0] ?? "",
          logprob: top[0]?.[1] ?? 0,
          top_logprobs: top.map(([token, logprob]) => ({ token, logprob }))
        }]
      }
    }],
    usage: { prompt_tokens: 120, completion_tokens: 1 },
    ...extra
  })

describe("LetterReadout", () => {
  it("builds the letter request of decisions.md", () => {
    const request = letterRequest("m-1", read, null)
    assert.strictEqual(request.model, "m-1")
    assert.strictEqual(request.max_tokens, 1)
    assert.strictEqual(request.logprobs, true)
    assert.strictEqual(request.top_logprobs, 20)
    assert.strictEqual(request.temperature, 0)
    assert.strictEqual(request.messages.length, 1)
    assert.strictEqual(request.messages[0]!.role, "user")
    assert.strictEqual(
      request.messages[0]!.content,
      [
        "Read the state below, then answer the question about it.",
        "",
        "State:",
        "customer: Ada",
        "issue: refund",
        "",
        "Earlier answers:",
        "- urgent: The message is urgent",
        "  answer: yes (probability 0.91)",
        "",
        "Question: Which team handles it?",
        "",
        "Options:",
        "A. billing - payments and refunds",
        "B. support",
        "C. sales - new contracts",
        "",
        "Answer with the letter of the correct option (A to C) alone, nothing else."
      ].join("\n")
    )
  })

  it("lists a noul as a proposition with A yes and B no, and omits empty earlier answers", () => {
    const prompt = letterPrompt({
      ...read,
      context: [],
      type: "noul",
      instructions: "The customer wants a refund",
      options: [{ name: "yes", description: null }, { name: "no", description: null }]
    })
    assert.include(prompt, "Proposition: The customer wants a refund\nIs the proposition true of the state?")
    assert.include(prompt, "Options:\nA. yes\nB. no")
    assert.notInclude(prompt, "Earlier answers")
  })

  it("asks for a thought first, then carries it into the letter request", () => {
    const thinking = { ...read, thinkTokens: 64 }
    const think = thinkRequest("m-1", thinking, 64)
    assert.strictEqual(think.max_tokens, 64)
    assert.isUndefined(think.logprobs)
    assert.include(think.messages[0]!.content, "in at most 64 tokens")
    const letter = letterRequest("m-1", thinking, "Refunds are billing.")
    assert.deepStrictEqual(letter.messages.map((m) => m.role), ["user", "assistant", "user"])
    assert.strictEqual(letter.messages[0]!.content, thinkPrompt(thinking))
    assert.strictEqual(letter.messages[1]!.content, "Refunds are billing.")
    assert.strictEqual(letter.messages[2]!.content, "Now answer with the letter of the correct option (A to C) alone, nothing else.")
    assert.strictEqual(letter.max_tokens, 1)
  })

  it("measures the prompts without rendering the state again", () => {
    const bytes = promptBytes(read, Buffer.byteLength(read.state))
    assert.strictEqual(bytes.answer, Buffer.byteLength(letterPrompt(read)))
    assert.strictEqual(bytes.think, Buffer.byteLength(thinkPrompt({ ...read, thinkTokens: 0 })))
  })

  it("reads option probabilities from the first token's top log-probabilities", () => {
    const reply = parseLetterResponse(
      withTop([["A", Math.log(0.6)], [" B", Math.log(0.2)], ["B", Math.log(0.1)], ["The", Math.log(0.05)], ["a", Math.log(0.05)]]),
      3
    )
    assert.strictEqual(reply._tag, "Answered")
    if (reply._tag !== "Answered") return
    assert.strictEqual(reply.id, "chatcmpl-1")
    assert.deepStrictEqual(reply.usage, { inputTokens: 120, outputTokens: 1 })
    const [a, b, c] = reply.probabilities!
    assert.closeTo(a!, 0.6 / 0.9, 1e-12)
    assert.closeTo(b!, 0.3 / 0.9, 1e-12)
    assert.strictEqual(c, 0)
  })

  it("ignores letters beyond the read's options", () => {
    const reply = parseLetterResponse(withTop([["D", Math.log(0.7)], ["B", Math.log(0.3)]]), 3)
    assert.deepStrictEqual(reply._tag === "Answered" ? reply.probabilities : null, [0, 1, 0])
  })

  it("answers null probabilities when no letter or no log-probabilities came back (a billed call)", () => {
    const none = parseLetterResponse(withTop([["Hello", -0.1], ["The", -2]]), 3)
    assert.deepStrictEqual(none, { _tag: "Answered", id: "chatcmpl-1", usage: { inputTokens: 120, outputTokens: 1 }, probabilities: null })
    const missing = parseLetterResponse(
      body({ id: "x", choices: [{ message: { content: "A" } }], usage: { prompt_tokens: 5, completion_tokens: 1 } }),
      2
    )
    assert.strictEqual(missing._tag === "Answered" ? missing.probabilities : "malformed", null)
  })

  it("calls an unreadable body or missing usage malformed", () => {
    assert.deepStrictEqual(parseLetterResponse("{not json", 2), { _tag: "Malformed", reason: "the body is not JSON" })
    assert.deepStrictEqual(parseLetterResponse("[1]", 2), { _tag: "Malformed", reason: "the body is not a JSON object" })
    assert.deepStrictEqual(parseLetterResponse(withTop([["A", 0]], { usage: undefined }), 2), {
      _tag: "Malformed",
      reason: "the body has no usable usage"
    })
    assert.strictEqual(
      parseLetterResponse(withTop([["A", 0]], { usage: { prompt_tokens: -1, completion_tokens: 1 } }), 2)._tag,
      "Malformed"
    )
  })

  it("reads a thought and its usage", () => {
    const reply = parseThoughtResponse(
      body({ id: "t-1", choices: [{ message: { content: "It is about money." } }], usage: { prompt_tokens: 90, completion_tokens: 5 } })
    )
    assert.deepStrictEqual(reply, { _tag: "Thought", id: "t-1", usage: { inputTokens: 90, outputTokens: 5 }, text: "It is about money." })
    assert.strictEqual(parseThoughtResponse(body({ choices: [] }))._tag, "Malformed")
  })
})
