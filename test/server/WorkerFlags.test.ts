/**
 * The V8 flags of every server process (src/server/Workers.ts): a worker gets the server's flags, unless the command
 * line already set the same flag, which wins.
 */
import { assert, describe, it } from "@effect/vitest"
import { ServerNodeFlags, withServerNodeFlags } from "../../src/server/Workers.js"

describe("worker flags", () => {
  it("adds the server's flags to a command line without them, after nothing else is lost", () => {
    assert.deepStrictEqual(withServerNodeFlags(["--enable-source-maps"]), [...ServerNodeFlags, "--enable-source-maps"])
    assert.include(withServerNodeFlags([]), "--max-semi-space-size=32")
  })

  it("keeps a size the operator gave on the command line", () => {
    assert.deepStrictEqual(withServerNodeFlags(["--max-semi-space-size=64"]), ["--max-semi-space-size=64"])
  })
})
