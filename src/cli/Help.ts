/**
 * The operator CLI's help (src/cli.ts): `--help` of any command, its usage written as the whole command line from
 * `arbiter` on, the global options in a section of their own; the usage printed after a command line that is not a
 * command; and the words of a command line's refusal. Written from the commands' specs (each option's spec is made
 * with the flag it describes, Options.ts), read through a function when help is first shown: the group commands that
 * show help are among them. Headings are bold; Output.ts takes the colour out where it does not go to a terminal.
 */
import { Console } from "effect"
import type * as CliError from "effect/cli/CliError"
import { logLevelNames } from "../config/AppConfig.js"
import { optionWords } from "./CommandLine.js"
import type { OptionSpec } from "./Options.js"

/** What help says of a command: its name, description, options, and the commands of a group. */
export interface CommandSpec {
  readonly name: string
  readonly description: string
  readonly options: ReadonlyArray<OptionSpec>
  readonly subcommands?: ReadonlyArray<CommandSpec>
}

export const name = "arbiter"
export const version = "0.1.0"

const heading = (text: string) => `\x1b[0;1m${text}\x1b[0m`
const title = `\x1b[0;1m\x1b[0;37;1m${name}\x1b[0;1m\x1b[0m`

const KindWords: Record<OptionSpec["kind"], string> = {
  text: "A user-defined piece of text.",
  integer: "An integer.",
  boolean: "A true or false value."
}

/** An option as usage and help write it: `--name text`, `--amount-micros integer`, `--verified`. */
const optionText = (option: OptionSpec) => option.kind === "boolean" ? `--${option.name}` : `--${option.name} ${option.kind}`

/** A command's usage from its own name on: its options (those that may be left out in brackets), or a group's command. */
const usageOf = (command: CommandSpec): string =>
  command.subcommands !== undefined
    ? `${command.name} <command>`
    : [command.name, ...command.options.map((option) => option.optional ? `[${optionText(option)}]` : optionText(option))].join(" ")

/** The command a command line names: its path from the root (the root's name first) and its spec. */
interface Located {
  readonly path: ReadonlyArray<string>
  readonly command: CommandSpec
}

const locate = (root: CommandSpec, args: ReadonlyArray<string>): Located => {
  const words = optionWords(args)
  const topLevel = root.subcommands ?? []
  const topIndex = words.findIndex((word) => topLevel.some((command) => command.name === word))
  const top = topIndex === -1 ? undefined : topLevel.find((command) => command.name === words[topIndex])
  if (top === undefined) return { path: [root.name], command: root }
  const leaf = top.subcommands === undefined
    ? undefined
    : words.slice(topIndex + 1).map((word) => top.subcommands!.find((command) => command.name === word)).find((found) => found !== undefined)
  return leaf === undefined ? { path: [root.name, top.name], command: top } : { path: [root.name, top.name, leaf.name], command: leaf }
}

/** The whole command line of a located command, from `arbiter` on. */
const usageLine = (located: Located) => [...located.path.slice(0, -1), usageOf(located.command)].join(" ")

const globalOptions = [
  heading("GLOBAL OPTIONS"),
  heading(`--log-level ${logLevelNames.join(" | ")}`),
  "  Show log lines from this level up (the names LOG_LEVEL takes; default warn).",
  heading("-h, --help"),
  "  Show the help of a command.",
  heading("--version"),
  "  Show the version.",
  heading("--completions sh | bash | fish | zsh"),
  "  Print a completion script for a shell."
]

const optionsSection = (options: ReadonlyArray<OptionSpec>) =>
  options.length === 0 ? [] : [
    heading("OPTIONS"),
    ...options.flatMap((option) => [
      heading(optionText(option)),
      `  ${KindWords[option.kind]}`,
      `  ${option.description}`,
      ...(option.optional ? ["  This setting is optional."] : [])
    ])
  ]

/** The commands a group lists: its own (the root: each group with its commands too), usage and description aligned. */
const commandsSection = (located: Located) => {
  const subcommands = located.command.subcommands
  if (subcommands === undefined) return []
  const atRoot = located.path.length === 1
  const entries = subcommands.flatMap((command) => [
    [usageOf(command).replace(/ <command>$/, ""), command.description] as const,
    ...(atRoot ? (command.subcommands ?? []).map((child) => [`${command.name} ${usageOf(child)}`, child.description] as const) : [])
  ])
  const width = Math.max(...entries.map(([usage]) => usage.length))
  return [heading("COMMANDS"), ...entries.map(([usage, description]) => `  - ${usage.padEnd(width)}  ${description}`)]
}

/** Prints the help of the command a command line names. */
const showHelpOf = (root: CommandSpec, args: ReadonlyArray<string>) => {
  const located = locate(root, args)
  return Console.log([
    title,
    `${name} ${version}`,
    heading("USAGE"),
    usageLine(located),
    heading("DESCRIPTION"),
    located.command.description,
    ...optionsSection(located.command.options),
    ...commandsSection(located),
    ...globalOptions
  ].join("\n\n") + "\n")
}

/** Printed after a usage error's message: how the command is written, and where its options are described. */
const showUsageOf = (root: CommandSpec, args: ReadonlyArray<string>) => {
  const located = locate(root, args)
  return Console.error(`Usage: ${usageLine(located)}\n"${located.path.join(" ")} --help" describes every option.`)
}

/** The option of a located command named `option` (with or without its dashes). */
const optionNamed = (located: Located, option: string) =>
  located.command.options.find((each) => each.name === option.replace(/^-+/, ""))

/**
 * A refusal of a command line in words: a command not found names the root's commands, as does anything given to a
 * group; a missing option, a missing value (an option that may be left out, given without its value, is read as a word
 * the command does not take), a value that is not a whole number, an unknown option or a word too many.
 */
const refusalOf = (root: CommandSpec, args: ReadonlyArray<string>, error: CliError.CliError): string => {
  const located = locate(root, args)
  if (located.command.subcommands !== undefined || error._tag === "UnknownSubcommand") {
    const names = (root.subcommands ?? []).map((command) => `'${command.name}'`).join(", ")
    return `Invalid subcommand for ${root.name} - use one of ${names}`
  }
  switch (error._tag) {
    case "MissingOption":
      return `Expected to find option: '--${error.option}'`
    case "InvalidValue":
      if (error.value === "") {
        return optionNamed(located, error.option)?.optional === true
          ? `Received unknown argument: '--${error.option}'`
          : `Expected a value following option: '--${error.option}'`
      }
      return `'${error.value}' is not a ${optionNamed(located, error.option)?.kind ?? "valid value"}`
    case "UnrecognizedOption":
      return `Received unknown argument: '${error.option}'`
    case "UnexpectedArgument":
      return `Received unknown argument: '${error.arguments[0] ?? ""}'`
    default:
      return error.message
  }
}

/**
 * The refusals of a command line, one line each: every required option it leaves out when that is what it lacks
 * (the parser names the first), else each error.
 */
const refusalsOf = (root: CommandSpec, args: ReadonlyArray<string>, errors: ReadonlyArray<CliError.CliError>) => {
  const located = locate(root, args)
  if (errors.length > 0 && located.command.subcommands === undefined && errors.every((error) => error._tag === "MissingOption")) {
    const given = new Set(optionWords(args).map((word) => word.split("=", 1)[0]))
    const missing = located.command.options.filter((option) => !option.optional && !given.has(`--${option.name}`))
    if (missing.length > 0) return missing.map((option) => `Expected to find option: '--${option.name}'`)
  }
  return errors.map((error) => refusalOf(root, args, error))
}

/** Help, usage and refusals for the program `root` describes (read at each use, after every command is made). */
export const cliHelp = (root: () => CommandSpec) => ({
  showHelp: (args: ReadonlyArray<string>) => showHelpOf(root(), args),
  showUsage: (args: ReadonlyArray<string>) => showUsageOf(root(), args),
  refusals: (args: ReadonlyArray<string>, errors: ReadonlyArray<CliError.CliError>) => refusalsOf(root(), args, errors)
})
