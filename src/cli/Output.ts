/**
 * Where the operator CLI writes: colour (help headings, errors) only to a terminal, and none with `NO_COLOR` set.
 */
import type { Console } from "effect"

/** Where the CLI's output goes: whether each stream is a terminal, and `NO_COLOR` (https://no-color.org). */
export interface CliOutput {
  readonly stdoutIsTerminal: boolean
  readonly stderrIsTerminal: boolean
  readonly noColor: string | undefined
}

const AnsiEscape = /\x1b\[[0-9;]*[A-Za-z]/g

const plain = (args: ReadonlyArray<unknown>) =>
  args.map((arg) => (typeof arg === "string" ? arg.replace(AnsiEscape, "") : arg))

/** A console that writes colour (help headings, errors) only to a terminal, and none with NO_COLOR set. */
export const colourConsole = (base: Console.Console, output: CliOutput): Console.Console => {
  const noColor = output.noColor !== undefined && output.noColor !== ""
  const stdout = noColor || !output.stdoutIsTerminal ? plain : (args: ReadonlyArray<unknown>) => args
  const stderr = noColor || !output.stderrIsTerminal ? plain : (args: ReadonlyArray<unknown>) => args
  return {
    ...base,
    log: (...args) => base.log(...stdout(args)),
    info: (...args) => base.info(...stdout(args)),
    debug: (...args) => base.debug(...stdout(args)),
    error: (...args) => base.error(...stderr(args)),
    warn: (...args) => base.warn(...stderr(args))
  }
}
