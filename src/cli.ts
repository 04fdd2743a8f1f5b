/**
 * The operator CLI: `npm run cli -- <command>`. Every command prints one JSON object on stdout; errors go to stderr
 * with a non-zero exit. Commands work against `DATABASE_URL`, or the embedded database in `DATA_DIR` (through the
 * running server's socket when a server owns it). `runCli` runs one command line in-process (the tests use it); run
 * as a program, this module runs `process.argv`.
 */
import { CliConfig, Command, Options, ValidationError } from "@effect/cli"
import { OpenApi } from "@effect/platform"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, Context, Data, Effect, Either, FiberRef, HashSet, Layer, Logger, LogLevel, Option } from "effect"
import { realpathSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Api } from "../schema/Api.js"
import { cliConfig, cliHelp, name, version } from "./cli/Help.js"
import { optionWords, takeLogLevel } from "./cli/CommandLine.js"
import { type CliOutput, colourConsole } from "./cli/Output.js"
import { AppConfig } from "./config/AppConfig.js"
import { migrateDatabase, MigrateOnStart, SqlForTools } from "./db/Sql.js"
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
export class CliDatabase extends Context.Reference<CliDatabase>()("CliDatabase", {
  defaultValue: (): typeof SqlForTools => SqlForTools
}) {}

const printJson = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

/** The CLI's log lines: logfmt on stderr, so that stdout carries a command's JSON alone. */
const CliLogger = Logger.withConsoleError(Logger.logfmtLogger)

const serve = Command.make("serve", {}, () =>
  Effect.flatMap(Effect.promise(() => import("./Server.js")), ({ ServerLive }) => Layer.launch(ServerLive)).pipe(
    // The server logs as `npm start` does (LOG_FORMAT, on stdout).
    Effect.provide(Logger.replace(CliLogger, Logger.defaultLogger))
  )).pipe(
  Command.withDescription("Run the HTTP server (the same as npm start).")
)

const migrateCommand = Command.make("migrate", {}, () =>
  Effect.flatMap(CliDatabase, (database) => Effect.provide(migrateDatabase, database)).pipe(
    Effect.flatMap((applied) => printJson({ applied: applied.map(([id, name]) => ({ id, name })) }))
  )).pipe(Command.withDescription("Apply the migrations not yet applied and print them."))

/** Runs a command's effect on the services over the CLI's database (migrated) and prints its result. */
const withServices = <A, E>(
  effect: Effect.Effect<A, E, Organizations | Keys | CreditStore | BillingRepo | OrganizationsRepo | QuotaLedger>
) =>
  Effect.flatMap(CliDatabase, (database) =>
    Effect.flatMap(
      Effect.provide(effect, DirectoryLive.pipe(Layer.provide(MigrateOnStart), Layer.provide(database))),
      printJson
    ))

const org = Options.text("org").pipe(Options.withDescription("organization id"))
const user = Options.text("user").pipe(Options.withDescription("user id"))
const email = Options.text("email").pipe(Options.withDescription("e-mail address"))
const verified = Options.boolean("verified").pipe(Options.withDescription("the e-mail address is verified"))

const orgCreate = Command.make(
  "create",
  {
    name: Options.text("name").pipe(Options.withDescription("organization name")),
    ownerEmail: Options.text("owner-email").pipe(Options.withDescription("the owner's e-mail address")),
    ownerId: Options.optional(Options.text("owner-id").pipe(Options.withDescription("the owner's user id (default: generated)"))),
    verified,
    billing: Options.boolean("billing").pipe(Options.withDescription("turn billing on (runs then need prepaid credit)"))
  },
  (options) =>
    withServices(Effect.flatMap(Organizations, (organizations) =>
      organizations.create({ ...options, ownerId: Option.getOrUndefined(options.ownerId) })))
).pipe(Command.withDescription(
  "Create an organization, its owner member and an owner API key with all nine scopes; prints {organization_id, owner_user_id, key: {id, secret}}."
))

const memberAdd = Command.make(
  "add",
  { org, user, email, role: Options.text("role").pipe(Options.withDescription("owner, admin, member, billing or viewer")), verified },
  (options) =>
    withServices(Effect.flatMap(Organizations, (organizations) =>
      organizations.addMember({ organizationId: options.org, userId: options.user, email: options.email, role: options.role, verified: options.verified })))
).pipe(Command.withDescription("Add a member to an organization (or change an existing member's role); prints the member."))

const parseScopes = (value: string) => {
  const scopes = value.split(",").map((scope) => scope.trim()).filter((scope) => scope !== "")
  const unknown = scopes.find((scope) => !isScope(scope))
  return unknown !== undefined
    ? Effect.fail(new InvalidInput({ message: `unknown scope "${unknown}"` }))
    : scopes.length === 0
    ? Effect.fail(new InvalidInput({ message: "a key needs at least one scope" }))
    : Effect.succeed(scopes as Array<Scope>)
}

const keyCreate = Command.make(
  "create",
  {
    org,
    user,
    name: Options.text("name").pipe(Options.withDescription("key name")),
    scopes: Options.text("scopes").pipe(Options.withDescription("comma-separated scopes, within the user's role"))
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
).pipe(Command.withDescription("Create an API key acting as a member, with scopes the member's role holds; prints {id, secret}."))

const keyRevoke = Command.make(
  "revoke",
  { org, key: Options.text("key").pipe(Options.withDescription("key id")) },
  (options) => withServices(Effect.flatMap(Keys, (keys) => keys.revokeAsOperator(options.org, options.key)))
).pipe(Command.withDescription("Revoke an API key (idempotent); prints the revoked key."))

const creditGrant = Command.make(
  "grant",
  {
    org,
    amountMicros: Options.integer("amount-micros").pipe(Options.withDescription("credit to add, in micro-USD (> 0)")),
    reason: Options.text("reason").pipe(Options.withDescription("shown as the transaction's description"))
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
).pipe(Command.withDescription("Grant credit to an organization; prints the transaction and the new balance."))

const billingSwitch = (enabled: boolean) =>
  Command.make(enabled ? "enable" : "disable", { org }, (options) =>
    withServices(Effect.gen(function*() {
      const updated = yield* (yield* CreditStore).setBilling(options.org, enabled)
      if (Option.isNone(updated)) return yield* new InvalidInput({ message: `no organization ${options.org}` })
      return { organization_id: options.org, billing_enabled: updated.value }
    }))).pipe(Command.withDescription(
      enabled
        ? "Turn billing on: runs then need available credit for their ceiling (402 otherwise) and are debited."
        : "Turn billing off: runs are never refused for credit and the balance is not debited."
    ))

const limitOption = (name: string, description: string) =>
  Options.optional(Options.text(name).pipe(Options.withDescription(`${description}, or "none" to remove the limit`)))

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

const quotaSet = Command.make(
  "set",
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
).pipe(Command.withDescription("Set or remove an organization's period quotas (per UTC month); prints the limits."))

const creditCommand = Command.make("credit", {}, () => showHelp(["credit"])).pipe(
  Command.withDescription("Prepaid credit."),
  Command.withSubcommands([creditGrant])
)
const billingCommand = Command.make("billing", {}, () => showHelp(["billing"])).pipe(
  Command.withDescription("Billing of an organization."),
  Command.withSubcommands([billingSwitch(true), billingSwitch(false)])
)
const quotaCommand = Command.make("quota", {}, () => showHelp(["quota"])).pipe(
  Command.withDescription("Period quotas."),
  Command.withSubcommands([quotaSet])
)

/** What PostgreSQL (or the connection) said of a failed statement, with a hint where the schema is missing. */
const sqlCause = (error: { readonly message: string; readonly cause?: unknown }): string => {
  const cause = error.cause as { readonly message?: unknown; readonly code?: unknown } | undefined
  const said = typeof cause?.message === "string" && cause.message !== "" ? cause.message : error.message
  // 42P01: undefined_table.
  return cause?.code === "42P01" ? `${said} (is the database migrated? \`arbiter migrate\` applies the migrations)` : said
}

/** An audit that found a rule of the ledger broken (its report, on stdout, names the rules and rows), or could not run. */
class LedgerAuditFailed extends Data.TaggedError("LedgerAuditFailed")<{ readonly message: string }> {}

const ledgerAudit = Command.make(
  "audit",
  { org: Options.optional(Options.text("org").pipe(Options.withDescription("audit this organization only"))) },
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
).pipe(Command.withDescription(
  "Check the ledger's money rules in one consistent snapshot (read only; a rule broken exits 1); prints the report."
))
const ledgerCommand = Command.make("ledger", {}, () => showHelp(["ledger"])).pipe(
  Command.withDescription("The ledger."),
  Command.withSubcommands([ledgerAudit])
)

const orgCommand = Command.make("org", {}, () => showHelp(["org"])).pipe(
  Command.withDescription("Organizations."),
  Command.withSubcommands([orgCreate])
)
const memberCommand = Command.make("member", {}, () => showHelp(["member"])).pipe(
  Command.withDescription("Members of an organization."),
  Command.withSubcommands([memberAdd])
)
const keyCommand = Command.make("key", {}, () => showHelp(["key"])).pipe(
  Command.withDescription("API keys."),
  Command.withSubcommands([keyCreate, keyRevoke])
)

const openapi = Command.make("openapi", {}, () => printJson(OpenApi.fromApi(Api))).pipe(
  Command.withDescription("Print the OpenAPI 3.1 document of this build.")
)

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

const root = Command.make("arbiter", {}, () => showHelp([])).pipe(
  Command.withDescription("Arbiter operator commands."),
  Command.withSubcommands(commands)
)

const { showHelp, showUsage } = cliHelp(() => ({
  rootHelp: Command.getHelp(root, cliConfig),
  topLevel: commands.map((command) => command.descriptor)
}))

export type { CliOutput }

const app = Command.run(root, { name, version })

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
    if (Either.isLeft(taken)) {
      yield* Console.error(`${taken.left}\n`)
      yield* showUsage(args)
      return 1
    }
    const { level, rest } = taken.right
    const words = optionWords(rest)
    const command = words.includes("--help") || words.includes("-h")
      ? showHelp(rest)
      : app(["node", name, ...rest])
    return yield* command.pipe(
      Logger.withMinimumLogLevel(Option.getOrElse(level, () => LogLevel.Warning)),
      Option.isSome(level) ? Effect.updateService(AppConfig, (settings) => ({ ...settings, logLevel: level.value })) : (self) => self,
      Effect.as(0),
      Effect.catchAll((error) =>
        ValidationError.isValidationError(error)
          // @effect/cli has printed the message.
          ? Effect.as(showUsage(rest), 1)
          : Effect.as(Console.error(describeFailure(error)), 1)
      )
    )
  })
  // The CLI's one logger, whatever loggers the caller's fiber had (a host that wrapped the default logger, as the
  // server's request context does, would otherwise keep its lines on stdout beside the command's JSON).
  return Console.consoleWith((base) => Effect.withConsole(run, colourConsole(base, output))).pipe(
    Effect.provide(CliConfig.layer(cliConfig)),
    Effect.locally(FiberRef.currentLoggers, HashSet.make<Array<Logger.Logger<unknown, any>>>(CliLogger))
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
  const program = runCli(process.argv.slice(2), {
    stdoutIsTerminal: process.stdout.isTTY === true,
    stderrIsTerminal: process.stderr.isTTY === true,
    noColor: process.env.NO_COLOR
  }).pipe(
    Effect.flatMap((code) => Effect.sync(() => (process.exitCode = code))),
    Effect.provide(AppConfig.layer),
    Effect.provide(NodeContext.layer)
  )
  NodeRuntime.runMain(program, { disablePrettyLogger: true })
}
