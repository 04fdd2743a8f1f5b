import { assert, describe, it } from "@effect/vitest"
import { canonicalDigest, canonicalJson, sha256Hex } from "../../src/encoding/CanonicalJson.js"

const fromHex = (hex: string): number => {
  const view = new DataView(new ArrayBuffer(8))
  view.setBigUint64(0, BigInt(`0x${hex}`))
  return view.getFloat64(0)
}

describe("CanonicalJson", () => {
  it("serializes the RFC 8785 section 3.2.2 example", () => {
    const input = JSON.parse(
      `{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],` +
        `"string": "\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\"\\/",` +
        `"literals": [null, true, false]}`
    )
    assert.strictEqual(
      canonicalJson(input),
      `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],` +
        `"string":"€$\\u000f\\nA'B\\"\\\\\\\\\\"/"}`
    )
  })

  it("sorts keys by UTF-16 code units (RFC 8785 section 3.2.3)", () => {
    const input = JSON.parse(
      `{"\\u20ac": "Euro Sign", "\\r": "Carriage Return", "\\ufb33": "Hebrew Letter Dalet With Dagesh", ` +
        `"1": "One", "\\ud83d\\ude00": "Emoji: Grinning Face", "\\u0080": "Control", ` +
        `"\\u00f6": "Latin Small Letter O With Diaeresis"}`
    )
    assert.strictEqual(
      canonicalJson(input),
      `{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",` +
        `"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}`
    )
  })

  it("formats numbers as ECMAScript does (RFC 8785 appendix B)", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["0000000000000000", "0"],
      ["8000000000000000", "0"],
      ["0000000000000001", "5e-324"],
      ["8000000000000001", "-5e-324"],
      ["7fefffffffffffff", "1.7976931348623157e+308"],
      ["ffefffffffffffff", "-1.7976931348623157e+308"],
      ["4340000000000000", "9007199254740992"],
      ["c340000000000000", "-9007199254740992"],
      ["4430000000000000", "295147905179352830000"],
      ["44b52d02c7e14af5", "9.999999999999997e+22"],
      ["44b52d02c7e14af6", "1e+23"],
      ["44b52d02c7e14af7", "1.0000000000000001e+23"],
      ["444b1ae4d6e2ef4e", "999999999999999700000"],
      ["444b1ae4d6e2ef4f", "999999999999999900000"],
      ["444b1ae4d6e2ef50", "1e+21"],
      ["3eb0c6f7a0b5ed8c", "9.999999999999997e-7"],
      ["3eb0c6f7a0b5ed8d", "0.000001"],
      ["41b3de4355555553", "333333333.3333332"],
      ["41b3de4355555554", "333333333.33333325"],
      ["41b3de4355555555", "333333333.3333333"],
      ["41b3de4355555556", "333333333.3333334"],
      ["41b3de4355555557", "333333333.33333343"],
      ["becbf647612f3696", "-0.0000033333333333333333"],
      ["43143ff3c1cb0959", "1424953923781206.2"]
    ]
    for (const [hex, expected] of cases) assert.strictEqual(canonicalJson(fromHex(hex)), expected, hex)
  })

  it("writes no whitespace, drops undefined members and nests sorted objects", () => {
    assert.strictEqual(
      canonicalJson({ b: [1, { z: true, a: null }], a: "x", skip: undefined }),
      `{"a":"x","b":[1,{"a":null,"z":true}]}`
    )
  })

  it("writes an undefined array item and a hole null, as JSON.stringify does", () => {
    // eslint-disable-next-line no-sparse-arrays
    const items = [, 1, undefined, [{}]]
    assert.strictEqual(canonicalJson(items), "[null,1,null,[{}]]")
    assert.strictEqual(canonicalJson(items), JSON.stringify(items))
  })

  it("refuses values JSON cannot hold", () => {
    assert.throws(() => canonicalJson(Number.NaN), TypeError)
    assert.throws(() => canonicalJson({ a: Infinity }), TypeError)
    assert.throws(() => canonicalJson(10n), TypeError)
  })

  it("digests the UTF-8 bytes with SHA-256", () => {
    assert.strictEqual(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    assert.strictEqual(canonicalDigest({ b: 1, a: 2 }), sha256Hex(`{"a":2,"b":1}`))
  })
})
