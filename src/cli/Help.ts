/**
 * The operator CLI's help (src/cli.ts): `--help` of any command, its usage written as the whole command line from
 * `arbiter` on, the global options in a section of their own; and the usage printed after a command line that is not
 * a command. The commands are read through a function, when help is first shown: the group commands that show help
 * are among them.
 */
import { CliConfig, CommandDescriptor, HelpDoc, Span, Usage } from "@effect/cli"
import { Array as Arr, Console, HashMap, HashSet, Option } from "effect"
import { logLevelNames } from "../config/AppConfig.js"
import { optionWords } from "./CommandLine.js"

/** What help needs of the program: the root command's help, and the descriptors of its commands. */
export interface CliProgram {
  readonly rootHelp: HelpDoc.HelpDoc
  readonly topLevel: ReadonlyArray<CommandDescriptor.Command<unknown>>
}

export const name = "arbiter"
export const version = "0.1.0"

/** Help lists the global options once, in its own section, with LOG_LEVEL's level names. */
export const cliConfig = CliConfig.make({ showBuiltIns: false })

/** The command a command line names: its path from the root, usage and help. */
interface Located {
  readonly path: ReadonlyArray<string>
  readonly usage: Usage.Usage
  readonly help: HelpDoc.HelpDoc
}

const hasName = (word: string) => (command: CommandDescriptor.Command<unknown>) =>
  HashSet.has(CommandDescriptor.getNames(command), word)

/** A group's usage: its name, then one of its commands (`Usage.mixed` renders as nothing in @effect/cli 0.77). */
const groupUsage = (group: string) =>
  Usage.concat(Usage.named([group], Option.none()), Usage.named(["<command>"], Option.none()))

const locate = (program: CliProgram, args: ReadonlyArray<string>): Located => {
  const { rootHelp, topLevel } = program
  const words = optionWords(args)
  const topIndex = words.findIndex((word) => topLevel.some(hasName(word)))
  const topName = words[topIndex]
  const top = topName === undefined ? undefined : topLevel.find(hasName(topName))
  if (topName === undefined || top === undefined) {
    return { path: [name], usage: groupUsage(name), help: rootHelp }
  }
  // A group's subcommands; a plain command's "subcommands" are itself.
  const children = CommandDescriptor.getSubcommands(top)
  const leaf = HashMap.has(children, topName)
    ? Option.none()
    : Arr.findFirst(words.slice(topIndex + 1), (word) =>
      Option.map(HashMap.get(children, word), (command) => [word, command] as const))
  return Option.match(leaf, {
    onNone: () => ({
      path: [name, topName],
      usage: HashMap.has(children, topName) ? CommandDescriptor.getUsage(top) : groupUsage(topName),
      help: CommandDescriptor.getHelp(top, cliConfig)
    }),
    onSome: ([leafName, command]) => ({
      path: [name, topName, leafName],
      usage: CommandDescriptor.getUsage(command),
      help: CommandDescriptor.getHelp(command, cliConfig)
    })
  })
}

/** The usage lines of a located command, each the whole command line from `arbiter` on. */
const usageLines = (located: Located): ReadonlyArray<Span.Span> => {
  const before = located.path.slice(0, -1)
  return Usage.enumerate(located.usage, cliConfig).map((span) =>
    before.length === 0 ? span : Span.concat(Span.text(`${before.join(" ")} `), span)
  )
}

const globalOptions = HelpDoc.sequence(
  HelpDoc.h1("GLOBAL OPTIONS"),
  HelpDoc.descriptionList([
    [
      Span.text(`--log-level ${logLevelNames.join(" | ")}`),
      HelpDoc.p("Show log lines from this level up (the names LOG_LEVEL takes; default warn).")
    ],
    [Span.text("-h, --help"), HelpDoc.p("Show the help of a command.")],
    [Span.text("--version"), HelpDoc.p("Show the version.")],
    [Span.text("--completions sh | bash | fish | zsh"), HelpDoc.p("Print a completion script for a shell.")]
  ])
)

/** Prints the help of the command a command line names. */
const showHelpOf = (program: CliProgram, args: ReadonlyArray<string>) => {
  const located = locate(program, args)
  return Console.log(HelpDoc.toAnsiText(HelpDoc.blocks([
    HelpDoc.h1(Span.code(name)),
    HelpDoc.p(`${name} ${version}`),
    HelpDoc.sequence(HelpDoc.h1("USAGE"), HelpDoc.blocks(usageLines(located).map((line) => HelpDoc.p(line)))),
    located.help,
    globalOptions
  ])))
}

/** Printed after a usage error's message: how the command is written, and where its options are described. */
const showUsageOf = (program: CliProgram, args: ReadonlyArray<string>) => {
  const located = locate(program, args)
  const lines = usageLines(located).map((line) => HelpDoc.toAnsiText(HelpDoc.p(line)).trim())
  return Console.error(`Usage: ${lines.join("\n       ")}\n"${located.path.join(" ")} --help" describes every option.`)
}

/** Help and usage for the program `program` gives (read at each use, after every command is made). */
export const cliHelp = (program: () => CliProgram) => ({
  showHelp: (args: ReadonlyArray<string>) => showHelpOf(program(), args),
  showUsage: (args: ReadonlyArray<string>) => showUsageOf(program(), args)
})
