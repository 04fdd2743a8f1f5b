/**
 * SHA-256 of a string's UTF-8 bytes (src/encoding/Sha256.ts): the published test vectors for ASCII and multi-byte
 * UTF-8, as hex and as bytes, and a long input against a `createHash` object.
 */
import { assert, describe, it } from "@effect/vitest"
import { createHash } from "node:crypto"
import { sha256Bytes, sha256Hex } from "../../src/encoding/Sha256.js"

// FIPS 180-2 (empty, "abc"), and digests computed independently with `printf %s ... | sha256sum`.
const vectors: ReadonlyArray<readonly [string, string]> = [
  ["", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
  ["abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
  ["héllo wörld €", "a3260bb658a2bce4e8e8b9cd613904a51582e107bd16c453b5530bd56be4937a"]
]

describe("sha256", () => {
  it("the test vectors, as hex and as bytes", () => {
    for (const [text, hex] of vectors) {
      assert.strictEqual(sha256Hex(text), hex, JSON.stringify(text))
      assert.strictEqual(sha256Bytes(text).toString("hex"), hex, JSON.stringify(text))
    }
  })

  it("a long input gives what a createHash object gives", () => {
    const text = "Hello, I am writing about order 84-1192 ✓ ".repeat(100)
    const expected = createHash("sha256").update(text, "utf8").digest()
    assert.strictEqual(sha256Hex(text), expected.toString("hex"))
    assert.isTrue(sha256Bytes(text).equals(expected))
  })
})
