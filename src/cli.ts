/**
 * The operator CLI: `npm run cli -- <command>`. Every command prints one JSON object on stdout; errors go to stderr
 * with a non-zero exit. Commands work against `DATABASE_URL`, or the embedded database in `DATA_DIR` (through the
 * running server's socket when a server owns it). `runCli` runs one command line in-process (the tests use it); run
 * as a program, this module runs `process.argv`.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Context, Data, Effect, Layer, Logger, Option, References, Result } from "effect"
import { CliConfig, CliError, CliOutput as Presentation, Command, GlobalFlag } from "effect/cli"
import { OpenApi } from "effect/http-api"
import { realpathSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Api } from "../schema/Api.js"
import { cliHelp, type CommandSpec, name, version } from "./cli/Help.js"
import { optionWords, takeLogLevel } from "./cli/CommandLine.js"
import { boolean, type CliOption, flagsOf, integer, optionalText, specsOf, text } from "./cli/Options.js"
import { type CliOutput, colourConsole } from "./cli/Output.js"
import { AppConfig } from "./config/AppConfig.js"
import { exitOnSettingsProblems } from "./config/SettingsCheck.js"
import { migrateDatabase, MigrateOnStart, SqlForTools } from "./db/Sql.js"
import { driverCause } from "./db/SqlErrors.js"
import type { SqlError } from "effect/sql/SqlError"
import { isScope, scopesOfRole, type Scope } from "../schema/Scope.js"
import { BillingRepo } from "./billing/BillingRepo.js"
import { auditLedger } from "./ledger/Audit.js"
import { CreditStore } from "./ledger/CreditStore.js"
import { newTransactionId } from "./ids/Ids.js"
import { Keys } from "./keys/Keys.js"
import { OrganizationsRepo } from "./organizations/OrganizationsRepo.js"
import { periodOf, QuotaLedger } from "./ledger/QuotaLedger.js"
import { InvalidInput, Organizations } from "./organizations/Organizations.js"
import { DirectoryLive } from "./Services.js"

/**
 * The database the commands use: `SqlForTools` (the configured database, through a running server's socket when
 * one owns the embedded files). A test running the CLI inside the server's own process points it at that socket.
 */
export const CliDatabase = Context.Reference<typeof SqlForTools>("CliDatabase", { defaultValue: () => SqlForTools })
export type CliDatabase = typeof CliDatabase

const printJson = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

/** The CLI's log lines: logfmt on stderr, so that stdout carries a command's JSON alone. */
const CliLogger = Logger.withConsoleError(Logger.formatLogFmt)

/** The values of a command's options, as its handler gets them. */
type Values<Options> = { readonly [K in keyof Options]: Options[K] extends CliOption<infer A> ? A : never }

/** A command and what its help says of it. */
interface CliCommand<C extends Command.Command.Any = Command.Command.Any> {
  readonly command: C
  readonly spec: CommandSpec
}

/** A command with options: parsed by effect/cli, described from the same options. */
const leaf = <const Options extends Record<string, CliOption<any>>, E, R>(
  commandName: string,
  description: string,
  options: Options,
  handler: (values: Values<Options>) => Effect.Effect<void, E, R>
) => ({
  command: Command.make(commandName, flagsOf(options), (input) => handler(input as Values<Options>)).pipe(
    Command.withDescription(description)
  ),
  spec: { name: commandName, description, options: specsOf(options) }
})

/** A group of commands; alone on the command line, it shows its help. */
const group = <const Children extends ReadonlyArray<CliCommand>>(commandName: string, description: string, children: Children) => ({
  command: Command.make(commandName, {}, () => showHelp([commandName])).pipe(
    Command.withDescription(description),
    Command.withSubcommands(children.map((child): Children[number]["command"] => child.command))
  ),
  spec: { name: commandName, description, options: [], subcommands: children.map((child) => child.spec) }
})

const serve = leaf("serve", "Run the HTTP server (the same as npm start).", {}, () =>
  // The server's own requirements of the settings (on PostgreSQL, BILLING_PROVIDER chosen) are checked as
  // `npm start` checks them: each problem on its own line, exit 78, before anything is opened.
  Effect.andThen(
    Effect.sync(() => exitOnSettingsProblems({ serving: true })),
    Effect.flatMap(Effect.promise(() => import("./Server.js")), ({ ServerLive }) => Layer.launch(ServerLive))
  ).pipe(
    // The server logs as `npm start` does (LOG_FORMAT, on stdout).
    Effect.provideService(Logger.CurrentLoggers, new Set([Logger.defaultLogger]))
  ))

const migrateCommand = leaf("migrate", "Apply the migrations not yet applied and print them.", {}, () =>
  Effect.flatMap(CliDatabase, (database) => Effect.provide(migrateDatabase, database)).pipe(
    Effect.flatMap((applied) => printJson({ applied: applied.map(([id, name]) => ({ id, name })) }))
  ))

/**
 * Runs a command's effect on the services over the CLI's database (migrated first, unless `MIGRATIONS=off` leaves
 * that to `migrate` alone) and prints its result.
 */
const withServices = <A, E>(
  effect: Effect.Effect<A, E, Organizations | Keys | CreditStore | BillingRepo | OrganizationsRepo | QuotaLedger>
) =>
  Effect.gen(function*() {
    const database = yield* CliDatabase
    const { migrations } = yield* AppConfig
    const services = migrations === "auto" ? DirectoryLive.pipe(Layer.provide(MigrateOnStart)) : DirectoryLive
    return yield* printJson(yield* Effect.provide(effect, services.pipe(Layer.provide(database))))
  })

const org = text("org", "organization id")
const user = text("user", "user id")
const email = text("email", "e-mail address")
const verified = boolean("verified", "the e-mail address is verified")

const orgCreate = leaf(
  "create",
  "Create an organization, its owner member and an owner API key with all nine scopes; prints {organization_id, owner_user_id, key: {id, secret}}.",
  {
    name: text("name", "organization name"),
    ownerEmail: text("owner-email", "the owner's e-mail address"),
    ownerId: optionalText("owner-id", "the owner's user id (default: generated)"),
    verified,
    billing: boolean("billing", "turn billing on (runs then need prepaid credit)")
  },
  (options) =>
    withServices(Effect.flatMap(Organizations, (organizations) =>
      organizations.create({ ...options, ownerId: Option.getOrUndefined(options.ownerId) })))
)

const memberAdd = leaf(
  "add",
  "Add a member to an organization (or change an existing member's role); prints the member.",
  { org, user, email, role: text("role", "owner, admin, member, billing or viewer"), verified },
  (options) =>
    withServices(Effect.flatMap(Organizations, (organizations) =>
      organizations.addMember({ organizationId: options.org, userId: options.user, email: options.email, role: options.role, verified: options.verified })))
)

const parseScopes = (value: string) => {
  const scopes = value.split(",").map((scope) => scope.trim()).filter((scope) => scope !== "")
  const unknown = scopes.find((scope) => !isScope(scope))
  return unknown !== undefined
    ? Effect.fail(new InvalidInput({ message: `unknown scope "${unknown}"` }))
    : scopes.length === 0
    ? Effect.fail(new InvalidInput({ message: "a key needs at least one scope" }))
    : Effect.succeed(scopes as Array<Scope>)
}

const keyCreate = leaf(
  "create",
  "Create an API key acting as a member, with scopes the member's role holds; prints {id, secret}.",
  {
    org,
    user,
    name: text("name", "key name"),
    scopes: text("scopes", "comma-separated scopes, within the user's role")
  },
  (options) =>
    withServices(Effect.gen(function*() {
      const organizations = yield* Organizations
      const keys = yield* Keys
      const scopes = yield* parseScopes(options.scopes)
      const member = yield* organizations.requireMember(options.org, options.user)
      const allowed = new Set(scopesOfRole(member.role))
      const exceeding = scopes.find((scope) => !allowed.has(scope))
      if (exceeding !== undefined) {
        return yield* new InvalidInput({ message: `${options.user} (${member.role}) does not hold the ${exceeding} scope` })
      }
      const key = yield* keys.issue({
        organizationId: options.org,
        name: options.name,
        principal: { type: "user", id: options.user },
        scopes,
        createdBy: options.user
      })
      return { id: key.id, secret: key.secret }
    }))
)

const keyRevoke = leaf(
  "revoke",
  "Revoke an API key (idempotent); prints the revoked key.",
  { org, key: text("key", "key id") },
  (options) => withServices(Effect.flatMap(Keys, (keys) => keys.revokeAsOperator(options.org, options.key)))
)

const creditGrant = leaf(
  "grant",
  "Grant credit to an organization; prints the transaction and the new balance.",
  {
    org,
    amountMicros: integer("amount-micros", "credit to add, in micro-USD (> 0)"),
    reason: text("reason", "shown as the transaction's description")
  },
  (options) =>
    withServices(Effect.gen(function*() {
      if (options.amountMicros <= 0) return yield* new InvalidInput({ message: "--amount-micros must be above 0" })
      yield* (yield* Organizations).requireOrganization(options.org)
      const id = newTransactionId()
      const credit = yield* CreditStore
      yield* credit.credit({ organizationId: options.org, id, kind: "grant", amountMicros: options.amountMicros, description: options.reason })
      yield* (yield* BillingRepo).rearm(options.org)
      const [account] = yield* credit.balances([options.org])
      return { organization_id: options.org, transaction_id: id, amount_micros: options.amountMicros, balance_micros: account?.balance_micros ?? 0 }
    }))
)

const billingSwitch = (enabled: boolean) =>
  leaf(
    enabled ? "enable" : "disable",
    enabled
      ? "Turn billing on: runs then need available credit for their ceiling (402 otherwise) and are debited."
      : "Turn billing off: runs are never refused for credit and the balance is not debited.",
    { org },
    (options) =>
      withServices(Effect.gen(function*() {
        const updated = yield* (yield* CreditStore).setBilling(options.org, enabled)
        if (Option.isNone(updated)) return yield* new InvalidInput({ message: `no organization ${options.org}` })
        return { organization_id: options.org, billing_enabled: updated.value }
      }))
  )

const limitOption = (optionName: string, description: string) =>
  optionalText(optionName, `${description}, or "none" to remove the limit`)

const parseLimit = (name: string, value: Option.Option<string>, current: number | null) =>
  Option.match(value, {
    onNone: () => Effect.succeed(current),
    onSome: (text) =>
      text === "none"
        ? Effect.succeed(null)
        : /^\d{1,15}$/.test(text)
        ? Effect.succeed(Number(text))
        : Effect.fail(new InvalidInput({ message: `${name} must be a whole number >= 0 or "none"` }))
  })

const quotaSet = leaf(
  "set",
  "Set or remove an organization's period quotas (per UTC month); prints the limits.",
  {
    org,
    spendLimit: limitOption("spend-limit-micros", "period spend limit in micro-USD"),
    tokenLimit: limitOption("token-limit", "period token limit (input plus output)")
  },
  (options) =>
    withServices(Effect.gen(function*() {
      yield* (yield* Organizations).requireOrganization(options.org)
      const quota = yield* QuotaLedger
      const current = yield* quota.read(options.org, periodOf(new Date()))
      const spendLimitMicros = yield* parseLimit("--spend-limit-micros", options.spendLimit, current.spendLimitMicros)
      const tokenLimit = yield* parseLimit("--token-limit", options.tokenLimit, current.tokenLimit)
      yield* quota.setLimits(options.org, { spendLimitMicros, tokenLimit })
      return { organization_id: options.org, period_spend_limit_micros: spendLimitMicros, period_token_limit: tokenLimit }
    }))
)

const creditCommand = group("credit", "Prepaid credit.", [creditGrant])
const billingCommand = group("billing", "Billing of an organization.", [billingSwitch(true), billingSwitch(false)])
const quotaCommand = group("quota", "Period quotas.", [quotaSet])

/** What PostgreSQL (or the connection) said of a failed statement, with a hint where the schema is missing. */
const sqlCause = (error: SqlError | { readonly message: string }): string => {
  const cause = ("reason" in error ? driverCause(error) : undefined) as { readonly message?: unknown; readonly code?: unknown } | undefined
  const said = typeof cause?.message === "string" && cause.message !== "" ? cause.message : error.message
  // 42P01: undefined_table.
  return cause?.code === "42P01" ? `${said} (is the database migrated? \`arbiter migrate\` applies the migrations)` : said
}

/** An audit that found a rule of the ledger broken (its report, on stdout, names the rules and rows), or could not run. */
class LedgerAuditFailed extends Data.TaggedError("LedgerAuditFailed")<{ readonly message: string }> {}

const ledgerAudit = leaf(
  "audit",
  "Check the ledger's money rules in one consistent snapshot (read only; a rule broken exits 1); prints the report.",
  { org: optionalText("org", "audit this organization only") },
  (options) =>
    Effect.gen(function*() {
      const { ledgerLeaseTtlSeconds } = yield* AppConfig
      const audit = auditLedger(Option.getOrNull(options.org), ledgerLeaseTtlSeconds)
      const report = yield* Effect.provide(audit, yield* CliDatabase).pipe(
        Effect.mapError((error) => new LedgerAuditFailed({ message: `could not audit the ledger: ${sqlCause(error)}` }))
      )
      yield* printJson(report)
      const broken = report.checks.filter((check) => check.violations > 0)
      if (broken.length === 0) return
      return yield* new LedgerAuditFailed({
        message: `the ledger breaks ${broken.length} rule(s): ` +
          `${broken.map((check) => `${check.name} (${check.violations} row(s))`).join(", ")}; the report is on stdout`
      })
    })
)
const ledgerCommand = group("ledger", "The ledger.", [ledgerAudit])

const orgCommand = group("org", "Organizations.", [orgCreate])
const memberCommand = group("member", "Members of an organization.", [memberAdd])
const keyCommand = group("key", "API keys.", [keyCreate, keyRevoke])

const openapi = leaf("openapi", "Print the OpenAPI 3.1 document of this build.", {}, () => printJson(OpenApi.fromApi(Api)))

const commands = [
  serve,
  migrateCommand,
  openapi,
  orgCommand,
  memberCommand,
  keyCommand,
  creditCommand,
  billingCommand,
  quotaCommand,
  ledgerCommand
] as const

const root = Command.make(name, {}, () => showHelp([])).pipe(
  Command.withDescription("Arbiter operator commands."),
  Command.withSubcommands(commands.map((command) => command.command))
)

const { refusals, showHelp, showUsage } = cliHelp(() => ({
  name,
  description: "Arbiter operator commands.",
  options: [],
  subcommands: commands.map((command) => command.spec)
}))

export type { CliOutput }

/**
 * What effect/cli would print for the command line `args`, printed as the CLI always has: help and usage by Help.ts (a
 * command line effect/cli refuses: the refusals in words, then the command's usage), the version alone.
 */
const presenterFor = (args: ReadonlyArray<string>): Presentation.Presenter => ({
  present: (event) => {
    switch (event._tag) {
      case "Help":
        return showHelp(event.commandPath.slice(1))
      case "InvalidInvocation": {
        const words = refusals(args, event.errors)
        return Effect.andThen(
          Effect.forEach(words, (line) => Console.error(`${line}\n`), { discard: true }),
          showUsage(event.commandPath.slice(1))
        )
      }
      case "Version":
        return Console.log(`${event.version}\n`)
    }
  }
})

/** Built in beside the commands: `--version` and `--completions` (help and `--log-level` are read before parsing). */
const CliSettings = CliConfig.layer({ builtIns: [GlobalFlag.Version, GlobalFlag.Completions] })

const app = Command.runWith(root, { version })

const describeFailure = (error: unknown) =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

/**
 * Runs one command line (the words after the program's name) and yields its exit code: 0 on success, 1 when the
 * command fails or the line is not a command (the message, then the usage, on stderr).
 */
export const runCli = (args: ReadonlyArray<string>, output: CliOutput) => {
  const run = Effect.gen(function*() {
    const taken = takeLogLevel(args)
    if (Result.isFailure(taken)) {
      yield* Console.error(`${taken.failure}\n`)
      yield* showUsage(args)
      return 1
    }
    const { level, rest } = taken.success
    const words = optionWords(rest)
    const command: Effect.Effect<void, unknown, Effect.Services<ReturnType<typeof app>>> =
      words.includes("--help") || words.includes("-h") ? showHelp(rest) : app(rest)
    return yield* command.pipe(
      Effect.provideService(Presentation.Presenter, presenterFor(rest)),
      Effect.provideService(References.MinimumLogLevel, Option.getOrElse(level, () => "Warn" as const)),
      Option.isSome(level) ? Effect.updateService(AppConfig, (settings) => ({ ...settings, logLevel: level.value })) : (self) => self,
      Effect.as(0),
      Effect.catch((error) =>
        CliError.isCliError(error)
          // The presenter has printed the refusal and the usage.
          ? Effect.succeed(1)
          : Effect.as(Console.error(describeFailure(error)), 1)
      )
    )
  })
  // The CLI's one logger, whatever loggers the caller's fiber had (a host that wrapped the default logger, as the
  // server's request context does, would otherwise keep its lines on stdout beside the command's JSON).
  return Console.consoleWith((base) => Effect.provideService(run, Console.Console, colourConsole(base, output))).pipe(
    Effect.provide(CliSettings),
    Effect.provideService(Logger.CurrentLoggers, new Set([CliLogger]))
  )
}

/** Whether this module is the program node was started with (`node dist/cli.mjs`, `node dist/src/cli.js`), not imported by another. */
const invokedAsProgram = (() => {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url))
  } catch {
    return false
  }
})()

if (invokedAsProgram) {
  // Every setting is checked before a command connects or migrates: a wrong one stops it here, one line each.
  exitOnSettingsProblems({ serving: false })
  const program = runCli(process.argv.slice(2), {
    stdoutIsTerminal: process.stdout.isTTY === true,
    stderrIsTerminal: process.stderr.isTTY === true,
    noColor: process.env.NO_COLOR
  }).pipe(
    Effect.flatMap((code) => Effect.sync(() => (process.exitCode = code))),
    Effect.provide(AppConfig.layer),
    Effect.provide(NodeServices.layer)
  )
  NodeRuntime.runMain(program)
}
