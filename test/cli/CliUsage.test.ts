/**
 * How the operator CLI talks to its operator, before any database is touched: a usage error is its message, then
 * the command's usage, on stderr; help shows each usage line as the whole command from `arbiter` on; colour only
 * goes to a terminal, never with NO_COLOR set; `--log-level` takes exactly the level names LOG_LEVEL takes.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Option, Result } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { logLevelNamed, logLevelNames, SettingsConfig } from "../../src/config/AppConfig.js"
import { runCliProcessWith, runCliWith } from "../support/Cli.js"

/** No database is reached by these command lines; the folder stays empty. */
const env = { DATA_DIR: mkdtempSync(join(tmpdir(), "arbiter-cli-usage-")) }

const piped = { stdoutIsTerminal: false, stderrIsTerminal: false, noColor: undefined }
const terminal = { stdoutIsTerminal: true, stderrIsTerminal: true, noColor: undefined }

const Escape = "\x1b["

const lines = (text: string) => text.split("\n").map((line) => line.trimEnd())

const OrgCreateUsage = "arbiter org create --name text --owner-email text [--owner-id text] [--verified] [--billing]"

describe("operator CLI usage", () => {
  describe("a usage error", () => {
    it.effect("prints the message, then the command's whole usage, on stderr; nothing on stdout; exit 1", () =>
      Effect.gen(function*() {
        const missing = yield* runCliWith(env, ["org", "create", "--name", "Acme"])
        assert.strictEqual(missing.code, 1)
        assert.strictEqual(missing.stdout, "")
        assert.notInclude(missing.stderr, "[object Object]")
        assert.deepStrictEqual(lines(missing.stderr).filter((line) => line !== ""), [
          "Expected to find option: '--owner-email'",
          `Usage: ${OrgCreateUsage}`,
          "\"arbiter org create --help\" describes every option."
        ])

        const badValue = yield* runCliWith(env, ["credit", "grant", "--org", "org_x", "--amount-micros", "lots", "--reason", "r"])
        assert.strictEqual(badValue.code, 1)
        assert.notInclude(badValue.stderr, "[object Object]")
        assert.include(badValue.stderr, "'lots' is not a integer")
        assert.include(badValue.stderr, "Usage: arbiter credit grant --org text --amount-micros integer --reason text")

        const unknown = yield* runCliWith(env, ["orgs", "create"])
        assert.strictEqual(unknown.code, 1)
        assert.strictEqual(unknown.stdout, "")
        assert.notInclude(unknown.stderr, "[object Object]")
        assert.include(unknown.stderr, "Invalid subcommand for arbiter")
        assert.include(unknown.stderr, "Usage: arbiter <command>")
      }))

    it.effect("is the same from a real process with its output piped: exit 1, no colour codes", () =>
      Effect.gen(function*() {
        const result = yield* runCliProcessWith(env, ["org", "create", "--name", "Acme"])
        assert.strictEqual(result.code, 1)
        assert.strictEqual(result.stdout, "")
        assert.notInclude(result.stderr, "[object Object]")
        assert.include(result.stderr, "Expected to find option: '--owner-email'")
        assert.include(result.stderr, `Usage: ${OrgCreateUsage}`)
        assert.notInclude(result.stderr, Escape)

        const help = yield* runCliProcessWith(env, ["org", "create", "--help"])
        assert.strictEqual(help.code, 0)
        assert.include(lines(help.stdout), OrgCreateUsage)
        assert.notInclude(help.stdout, Escape, "help written to a pipe carries no colour codes")
      }), { timeout: 60_000 })
  })

  describe("help", () => {
    it.effect("shows each usage line as the whole command line, from arbiter on", () =>
      Effect.gen(function*() {
        const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
          [["org", "create", "--help"], OrgCreateUsage],
          [["key", "revoke", "--help"], "arbiter key revoke --org text --key text"],
          [["billing", "disable", "-h"], "arbiter billing disable --org text"],
          [["quota", "set", "--org", "org_x", "--help"], "arbiter quota set --org text [--spend-limit-micros text] [--token-limit text]"],
          [["migrate", "--help"], "arbiter migrate"],
          [["org", "--help"], "arbiter org <command>"],
          [["org"], "arbiter org <command>"],
          [["--help"], "arbiter <command>"],
          [[], "arbiter <command>"]
        ]
        for (const [args, usage] of cases) {
          const result = yield* runCliWith(env, args)
          assert.strictEqual(result.code, 0, args.join(" "))
          const printed = lines(result.stdout)
          const at = printed.indexOf("USAGE")
          assert.isAbove(at, -1, args.join(" "))
          assert.strictEqual(printed.slice(at + 1).find((line) => line !== ""), usage, args.join(" "))
          assert.isFalse(printed.some((line) => line.startsWith("$ ")), `${args.join(" ")}: no usage line without its command path`)
        }
      }))
  })

  describe("colour", () => {
    it.effect("only on a terminal, and never with NO_COLOR set", () =>
      Effect.gen(function*() {
        const onTerminal = yield* runCliWith(env, ["org", "create", "--help"], terminal)
        assert.include(onTerminal.stdout, Escape, "help on a terminal is coloured")
        const toPipe = yield* runCliWith(env, ["org", "create", "--help"], piped)
        assert.notInclude(toPipe.stdout, Escape)
        assert.include(lines(toPipe.stdout), OrgCreateUsage)
        const noColor = yield* runCliWith(env, ["org", "create", "--help"], { ...terminal, noColor: "1" })
        assert.notInclude(noColor.stdout, Escape)
        assert.strictEqual(noColor.stdout, toPipe.stdout)
        const emptyNoColor = yield* runCliWith(env, ["org", "create", "--help"], { ...terminal, noColor: "" })
        assert.include(emptyNoColor.stdout, Escape, "an empty NO_COLOR does not turn colour off (no-color.org)")
        const stdoutOnly = yield* runCliWith(env, ["org", "create", "--help"], { ...terminal, stdoutIsTerminal: false })
        assert.notInclude(stdoutOnly.stdout, Escape, "stdout piped while stderr is a terminal")
      }))
  })

  describe("--log-level", () => {
    it("names exactly the levels LOG_LEVEL takes", () => {
      assert.deepStrictEqual(logLevelNames, ["all", "trace", "debug", "info", "warn", "error", "fatal", "off"])
    })

    it.effect("accepts each of LOG_LEVEL's names, in any case and either spelling of the option", () =>
      Effect.gen(function*() {
        for (const name of logLevelNames) {
          for (const args of [["--log-level", name, "openapi"], [`--log-level=${name.toUpperCase()}`, "openapi"], ["openapi", "--log-level", name]]) {
            const result = yield* runCliWith(env, args)
            assert.strictEqual(result.code, 0, `${args.join(" ")}: ${result.stderr}`)
            assert.strictEqual(result.json().openapi, "3.1.0", args.join(" "))
          }
          const setting = yield* Effect.result(SettingsConfig.parse(ConfigProvider.fromUnknown({ LOG_LEVEL: name })))
          assert.isTrue(Result.isSuccess(setting), `LOG_LEVEL=${name}`)
          if (Result.isSuccess(setting)) assert.deepStrictEqual(Option.some(setting.success.logLevel), logLevelNamed(name))
        }
      }))

    it.effect("refuses any other name, as LOG_LEVEL does, listing the names", () =>
      Effect.gen(function*() {
        for (const name of ["warning", "none", "verbose"]) {
          const result = yield* runCliWith(env, ["--log-level", name, "openapi"])
          assert.strictEqual(result.code, 1, name)
          assert.strictEqual(result.stdout, "", name)
          assert.include(result.stderr, `--log-level takes one of all, trace, debug, info, warn, error, fatal, off, not "${name}"`)
          const setting = yield* Effect.result(SettingsConfig.parse(ConfigProvider.fromUnknown({ LOG_LEVEL: name })))
          assert.isTrue(Result.isFailure(setting), `LOG_LEVEL=${name}`)
        }
        const bare = yield* runCliWith(env, ["openapi", "--log-level"])
        assert.strictEqual(bare.code, 1)
        assert.include(bare.stderr, "--log-level takes one of all, trace, debug, info, warn, error, fatal, off")
      }))

    it.effect("is listed in help with those names", () =>
      Effect.gen(function*() {
        const help = yield* runCliWith(env, ["--help"])
        assert.include(lines(help.stdout), "--log-level all | trace | debug | info | warn | error | fatal | off")
        assert.notInclude(help.stdout, "warning")
      }))
  })
})
