/**
 * Every setting checked before the service (or a CLI command) opens a connection or applies a migration: each
 * setting parsed on its own, so that every wrong one is reported, not only the first, then the rules between them.
 * Each problem is one line naming the setting and what it must be, without a stack trace; a secret's value is never
 * shown. The server and the CLI print the lines on stderr and exit with `ExitConfig` (sysexits' EX_CONFIG).
 */
import { type Config, ConfigProvider, Effect, Exit, Option } from "effect"
import { SettingFields, SettingRequirements, type Settings, SettingsRules } from "./AppConfig.js"

/** The exit code of a start refused for its settings (EX_CONFIG of sysexits.h). */
export const ExitConfig = 78

/** The environment the settings are read from. */
export type Environment = Readonly<Record<string, string | undefined>>

/** Settings whose values are secrets (a URL's password, keys): named in a problem, never shown. */
const isSecret = (name: string) => name === "DATABASE_URL" || /(_KEY|_SECRET)$/.test(name)

/** `NAME="value"`, or `NAME (value hidden)` for a secret. */
const shown = (name: string, env: Environment) => {
  const value = env[name]
  return value === undefined ? `${name} (unset)` : isSecret(name) ? `${name} (value hidden)` : `${name}=${JSON.stringify(value)}`
}

/**
 * One line of a setting that did not parse: its name and value, then what it must be (its rule, else what the
 * parser expected). The parser's message is `Expected ...` with an `at ["NAME"]` line; a rule's message starts with
 * the setting's name.
 */
const problemOf = (error: Config.ConfigError, env: Environment): string => {
  const [first = "", ...rest] = error.cause.message.split("\n")
  const pointed = rest.map((line) => /at \["([A-Za-z0-9_]+)"\]/.exec(line)?.[1]).find((name) => name !== undefined)
  const named = /^([A-Z][A-Z0-9_]*) (.*)$/.exec(first)
  const name = pointed ?? named?.[1]
  if (name === undefined) return `invalid setting: ${first}`
  const expected = first === "Expected a string representing a finite number" ? "expected a number" : `${first.charAt(0).toLowerCase()}${first.slice(1)}`
  const requirement = SettingRequirements.get(name) ?? (named !== null && named[1] === name ? named[2]! : expected)
  return `invalid setting ${shown(name, env)}: ${requirement}`
}

/**
 * What only a serving process requires: on PostgreSQL (a deployment) the payment processor chosen explicitly, since
 * the local one adds credit without payment (src/billing/PaymentProcessorLive.ts).
 */
const servingProblems = (settings: Settings): Array<string> =>
  Option.isSome(settings.databaseUrl) && !settings.billingProviderChosen
    ? [
      "invalid setting BILLING_PROVIDER (unset): with DATABASE_URL it must be set, to stripe (with STRIPE_SECRET_KEY " +
      "and STRIPE_WEBHOOK_SECRET), or to local for a development deployment (its checkout adds credit without payment)"
    ]
    : []

/** `WORKERS`, read by the primary before any setting (src/server/Workers.ts): a whole number 1 to 256, or unset. */
const workersProblems = (env: Environment): Array<string> => {
  const given = env.WORKERS
  if (given === undefined || given === "") return []
  const count = Number(given)
  return Number.isInteger(count) && count >= 1 && count <= 256
    ? []
    : [`invalid setting ${shown("WORKERS", env)}: must be a whole number, 1 to 256 (or unset: one per CPU)`]
}

/**
 * The problems with the settings of `env`, one line each, in the order of the settings; none when they are all valid.
 * `serving`: also what only the server requires (the CLI's commands do not serve).
 */
export const settingsProblems = (
  options: { readonly serving: boolean; readonly env?: Environment }
): ReadonlyArray<string> => {
  const env = options.env ?? process.env
  const provider = ConfigProvider.fromEnv({ env: env as Record<string, string> })
  const problems: Array<string> = []
  const parsed: Record<string, unknown> = {}
  for (const [key, config] of Object.entries(SettingFields) as Array<[string, Config.Config<unknown>]>) {
    const exit = Effect.runSyncExit(config.parse(provider))
    if (Exit.isSuccess(exit)) parsed[key] = exit.value
    else {
      const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")?.error
      problems.push(error === undefined ? `invalid setting: ${String(exit.cause)}` : problemOf(error, env))
    }
  }
  if (problems.length === 0) {
    const settings = parsed as unknown as Settings
    for (const rule of SettingsRules) if (!rule.holds(settings)) problems.push(`invalid setting ${rule.message}`)
    if (options.serving) problems.push(...servingProblems(settings))
  }
  if (options.serving) problems.push(...workersProblems(env))
  return problems
}

/**
 * Checks the settings of the environment and, when any is wrong, prints each problem on its own line on stderr and
 * exits with `ExitConfig`: nothing has been opened yet, so there is nothing to close.
 */
export const exitOnSettingsProblems = (options: { readonly serving: boolean }): void => {
  const problems = settingsProblems(options)
  if (problems.length === 0) return
  for (const line of problems) process.stderr.write(`${line}\n`)
  process.exit(ExitConfig)
}
