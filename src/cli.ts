/**
 * The operator CLI: `npm run cli -- <command>`. Every command prints one JSON object on stdout; errors go to stderr
 * with a non-zero exit. Commands work against `DATABASE_URL`, or the embedded database in `DATA_DIR` (through the
 * running server's socket when a server owns it).
 */
import { Command, Options } from "@effect/cli"
import { OpenApi } from "@effect/platform"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Logger, LogLevel, Option } from "effect"
import { Api } from "../schema/Api.js"
import { AppConfig } from "./AppConfig.js"
import { migrate } from "./db/Migrations.js"
import { MigrateOnStart, SqlForTools } from "./db/Sql.js"
import { isScope, scopesOfRole, type Scope } from "../schema/Scope.js"
import { BillingRepo } from "./billing/BillingRepo.js"
import { CreditStore } from "./ledger/CreditStore.js"
import { newTransactionId } from "./billing/Transactions.js"
import { Keys } from "./keys/Keys.js"
import { OrganizationsRepo } from "./organizations/OrganizationsRepo.js"
import { periodOf, QuotaLedger } from "./ledger/QuotaLedger.js"
import { InvalidInput, Organizations } from "./organizations/Organizations.js"
import { DirectoryLive } from "./Directory.js"

const printJson = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

const serve = Command.make("serve", {}, () =>
  Effect.flatMap(Effect.promise(() => import("./Server.js")), ({ ServerLive }) => Layer.launch(ServerLive))).pipe(
  Command.withDescription("Run the HTTP server (the same as npm start).")
)

const migrateCommand = Command.make("migrate", {}, () =>
  migrate().pipe(
    Effect.provide(SqlForTools),
    Effect.flatMap((applied) => printJson({ applied: applied.map(([id, name]) => ({ id, name })) }))
  )).pipe(Command.withDescription("Apply the migrations not yet applied and print them."))

/** The services, on the configured database, migrated. */
const ToolsLive = DirectoryLive.pipe(Layer.provide(MigrateOnStart), Layer.provide(SqlForTools))

const withServices = <A, E>(
  effect: Effect.Effect<A, E, Organizations | Keys | CreditStore | BillingRepo | OrganizationsRepo | QuotaLedger>
) =>
  Effect.flatMap(Effect.provide(effect, ToolsLive), printJson)

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

const creditCommand = Command.make("credit").pipe(
  Command.withDescription("Prepaid credit."),
  Command.withSubcommands([creditGrant])
)
const billingCommand = Command.make("billing").pipe(
  Command.withDescription("Billing of an organization."),
  Command.withSubcommands([billingSwitch(true), billingSwitch(false)])
)
const quotaCommand = Command.make("quota").pipe(
  Command.withDescription("Period quotas."),
  Command.withSubcommands([quotaSet])
)

const orgCommand = Command.make("org").pipe(
  Command.withDescription("Organizations."),
  Command.withSubcommands([orgCreate])
)
const memberCommand = Command.make("member").pipe(
  Command.withDescription("Members of an organization."),
  Command.withSubcommands([memberAdd])
)
const keyCommand = Command.make("key").pipe(
  Command.withDescription("API keys."),
  Command.withSubcommands([keyCreate, keyRevoke])
)

const openapi = Command.make("openapi", {}, () => printJson(OpenApi.fromApi(Api))).pipe(
  Command.withDescription("Print the OpenAPI 3.1 document of this build.")
)

const root = Command.make("arbiter").pipe(
  Command.withDescription("Arbiter operator commands."),
  Command.withSubcommands([
    serve,
    migrateCommand,
    openapi,
    orgCommand,
    memberCommand,
    keyCommand,
    creditCommand,
    billingCommand,
    quotaCommand
  ])
)

const cli = Command.run(root, { name: "arbiter", version: "0.1.0" })

const program = Effect.suspend(() => cli(process.argv)).pipe(
  Effect.catchAll((error) =>
    Console.error(typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error))
      .pipe(Effect.zipRight(Effect.sync(() => (process.exitCode = 1))))
  ),
  Effect.provide(AppConfig.layer),
  Effect.provide(NodeContext.layer),
  Effect.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

NodeRuntime.runMain(program, { disablePrettyLogger: true })
