/**
 * The operator CLI's command line, before effect/cli reads it: the words that can be options (those before `--`),
 * and the global `--log-level` taken out of the line wherever it stands.
 */
import { type LogLevel, Option, Result } from "effect"
import { logLevelNamed, logLevelNames } from "../config/AppConfig.js"

/** The words of a command line before `--` (after it, everything is a value). */
export const optionWords = (args: ReadonlyArray<string>) => {
  const end = args.indexOf("--")
  return end === -1 ? args : args.slice(0, end)
}

/** Takes `--log-level NAME` (or `--log-level=NAME`) out of a command line; fails with a usage message. */
export const takeLogLevel = (args: ReadonlyArray<string>): Result.Result<
  { readonly level: Option.Option<LogLevel.LogLevel>; readonly rest: ReadonlyArray<string> },
  string
> => {
  const words = optionWords(args)
  const rest: Array<string> = []
  let level = Option.none<LogLevel.LogLevel>()
  for (let index = 0; index < words.length; index++) {
    const word = words[index]!
    if (word !== "--log-level" && !word.startsWith("--log-level=")) {
      rest.push(word)
      continue
    }
    const value = word === "--log-level" ? words[++index] : word.slice("--log-level=".length)
    const named = value === undefined ? Option.none<LogLevel.LogLevel>() : logLevelNamed(value)
    if (Option.isNone(named)) {
      return Result.fail(
        `--log-level takes one of ${logLevelNames.join(", ")}${value === undefined ? "" : `, not ${JSON.stringify(value)}`}`
      )
    }
    level = named
  }
  return Result.succeed({ level, rest: [...rest, ...args.slice(words.length)] })
}
