/**
 * SHA-256 of a string's UTF-8 bytes (src/encoding/Sha256.ts), by Node's one-shot digest and by a `createHash` object
 * (the path of Nodes without it): both give the published test vectors, for ASCII, multi-byte UTF-8 and a long input.
 */
import { assert, describe, it } from "@effect/vitest"
import * as crypto from "node:crypto"
import { type OneShotHash, sha256Bytes, sha256Hex, sha256With } from "../../src/encoding/Sha256.js"

// FIPS 180-2 (empty, "abc"), and digests computed independently with `printf %s ... | sha256sum`.
const vectors: ReadonlyArray<readonly [string, string]> = [
  ["", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
  ["abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
  ["héllo wörld €", "a3260bb658a2bce4e8e8b9cd613904a51582e107bd16c453b5530bd56be4937a"]
]

describe("sha256", () => {
  const oneShot = (crypto as unknown as { readonly hash?: OneShotHash }).hash
  const ways = [["one-shot", sha256With(oneShot)], ["createHash", sha256With(undefined)]] as const
  for (const [way, digests] of ways) {
    it(`${way}: the test vectors, as hex and as bytes`, () => {
      for (const [text, hex] of vectors) {
        assert.strictEqual(digests.hex(text), hex, JSON.stringify(text))
        assert.strictEqual(digests.bytes(text).toString("hex"), hex, JSON.stringify(text))
      }
    })
  }

  it("the two ways agree on a long input, and the exports use one of them", () => {
    const text = "Hello, I am writing about order 84-1192 ✓ ".repeat(100)
    const [oneShotWay, objectWay] = [sha256With(oneShot), sha256With(undefined)]
    assert.strictEqual(oneShotWay.hex(text), objectWay.hex(text))
    assert.strictEqual(sha256Hex(text), objectWay.hex(text))
    assert.isTrue(sha256Bytes(text).equals(objectWay.bytes(text)))
    assert.isDefined(oneShot, "this Node has crypto.hash (20.12+), so the service uses the one-shot digest")
  })
})
