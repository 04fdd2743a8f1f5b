/**
 * The operator CLI's options, each made once as both the flag effect/cli parses (`flag`) and what its help says of it
 * (`spec`: its name, kind, description and whether it may be left out), so a command's help and usage are written from
 * the very options it parses. Kinds are the CLI's three: text, a whole number and a switch (which may always be left
 * out, meaning off).
 */
import type { Option } from "effect"
import { Flag } from "effect/cli"

/** What help says of one option. */
export interface OptionSpec {
  readonly name: string
  readonly kind: "text" | "integer" | "boolean"
  readonly description: string
  readonly optional: boolean
}

/** An option: its flag and its spec. */
export interface CliOption<A> {
  readonly flag: Flag.Flag<A>
  readonly spec: OptionSpec
}

/** A required text option. */
export const text = (name: string, description: string): CliOption<string> => ({
  flag: Flag.String(name).pipe(Flag.withDescription(description)),
  spec: { name, kind: "text", description, optional: false }
})

/** A text option that may be left out. */
export const optionalText = (name: string, description: string): CliOption<Option.Option<string>> => ({
  flag: Flag.optional(Flag.String(name).pipe(Flag.withDescription(description))),
  spec: { name, kind: "text", description, optional: true }
})

/** A required whole number. */
export const integer = (name: string, description: string): CliOption<number> => ({
  flag: Flag.Int(name).pipe(Flag.withDescription(description)),
  spec: { name, kind: "integer", description, optional: false }
})

/** A switch: on when given, off when left out. */
export const boolean = (name: string, description: string): CliOption<boolean> => ({
  flag: Flag.Boolean(name).pipe(Flag.withDescription(description), Flag.withDefault(false)),
  spec: { name, kind: "boolean", description, optional: true }
})

/** The flags of a set of options, as a command's config. */
export const flagsOf = <const Options extends Record<string, CliOption<any>>>(
  options: Options
): { readonly [K in keyof Options]: Options[K]["flag"] } =>
  Object.fromEntries(Object.entries(options).map(([key, option]) => [key, option.flag])) as any

/** The specs of a set of options, in their order. */
export const specsOf = (options: Record<string, CliOption<any>>): ReadonlyArray<OptionSpec> =>
  Object.values(options).map((option) => option.spec)
