import { assert, describe, it } from "@effect/vitest"
import { renderMessages, renderState } from "../../src/runs/StateRendering.js"

describe("renderState", () => {
  it("uses a string as is", () => {
    assert.strictEqual(renderState("  raw\ntext  "), "  raw\ntext  ")
  })

  it("renders objects as indented key: value lines, arrays as - items", () => {
    const state = {
      customer: "Ada",
      age: 36,
      vip: true,
      notes: null,
      address: { city: "Paris", zip: "75001", geo: { lat: 48.85 } },
      tags: ["new", "priority"],
      orders: [{ id: 1, items: ["pen"] }, { id: 2, items: [] }],
      matrix: [[1, 2], []],
      empty: {},
      blank: "",
      memo: "line one\nline two"
    }
    assert.strictEqual(
      renderState(state),
      [
        "customer: Ada",
        "age: 36",
        "vip: true",
        "notes: null",
        "address:",
        "  city: Paris",
        "  zip: 75001",
        "  geo:",
        "    lat: 48.85",
        "tags:",
        "  - new",
        "  - priority",
        "orders:",
        "  - id: 1",
        "    items:",
        "      - pen",
        "  - id: 2",
        "    items: []",
        "matrix:",
        "  - - 1",
        "    - 2",
        "  - []",
        "empty: {}",
        `blank: ""`,
        "memo: line one",
        "  line two"
      ].join("\n")
    )
  })

  it("is deterministic and keeps the object's key order", () => {
    const state = { b: { y: 1, x: [true] }, a: "z" }
    assert.strictEqual(renderState(state), renderState(JSON.parse(JSON.stringify(state))))
    assert.strictEqual(renderState(state), "b:\n  y: 1\n  x:\n    - true\na: z")
  })

  it("renders empty and scalar states", () => {
    assert.strictEqual(renderState({}), "{}")
    assert.strictEqual(renderState([]), "[]")
    assert.strictEqual(renderState(["a", { k: "v" }]), "- a\n- k: v")
  })
})

describe("renderMessages", () => {
  it("renders role: content turns separated by a blank line", () => {
    assert.strictEqual(
      renderMessages([
        { role: "user", content: "Hello" },
        { role: "assistant", content: "Hi.\nHow can I help?" }
      ]),
      "user: Hello\n\nassistant: Hi.\nHow can I help?"
    )
  })
})

describe("renderState at any depth", () => {
  const nest = (depth: number, leaf: unknown, wrap: (inner: unknown) => unknown) => {
    let value = leaf
    for (let i = 0; i < depth; i++) value = wrap(value)
    return value
  }

  it("renders 10,000 nested arrays without exhausting the stack", () => {
    const text = renderState(nest(10_000, 1, (inner) => [inner]))
    assert.strictEqual(text, `${"- ".repeat(10_000)}1`)
  })

  it("renders 5,000 nested objects as one indented line per level", () => {
    const text = renderState(nest(5_000, "leaf", (inner) => ({ k: inner })))!
    const lines = text.split("\n")
    assert.strictEqual(lines.length, 5_000)
    assert.strictEqual(lines[0], "k:")
    assert.strictEqual(lines[4_998], `${"  ".repeat(4_998)}k:`)
    assert.strictEqual(lines[4_999], `${"  ".repeat(4_999)}k: leaf`)
  })

  it("renders mixed nesting like the shallow rules say", () => {
    const state = nest(3, { a: [{ b: [[1, "x\ny"]] }] }, (inner) => ({ wrap: [inner] }))
    assert.strictEqual(
      renderState(state),
      [
        "wrap:",
        "  - wrap:",
        "      - wrap:",
        "          - a:",
        "              - b:",
        "                  - - 1",
        "                    - x",
        "                      y"
      ].join("\n")
    )
  })

  it("stops at the budget: a text longer than it renders as undefined, one within it in full", () => {
    const deep = nest(250, Array.from({ length: 800 }, () => "x"), (inner) => [inner])
    assert.isUndefined(renderState({ a: deep }, 100_000))
    const full = renderState({ a: deep })!
    assert.isAbove(full.length, 100_000)
    assert.strictEqual(renderState({ a: deep }, full.length), full)
    assert.isUndefined(renderState({ a: deep }, full.length - 1))
    assert.isUndefined(renderState("a long string", 5))
    assert.strictEqual(renderState({ s: "line 1\nline 2" }, "s: line 1\n   line 2".length), "s: line 1\n  line 2")
  })

  it("keeps __proto__ and other prototype names as ordinary keys", () => {
    const state = JSON.parse('{"__proto__": {"constructor": 1}, "toString": [2]}')
    assert.strictEqual(renderState(state), "__proto__:\n  constructor: 1\ntoString:\n  - 2")
  })
})
