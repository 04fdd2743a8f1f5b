/**
 * What the OpenAPI document says of a value that the schema itself does not check: the contract's bounds, pattern
 * or values of a field the service checks later, in its own order (check order, spec), with its own error. Decoding
 * never refuses on its account.
 */
import { Schema } from "effect"
import type { JsonSchema } from "effect"

/** A check that always passes and adds `fragment` to the field's JSON Schema. */
export const documentedAs = <T>(fragment: JsonSchema.JsonSchema) =>
  Schema.makeFilter<T>(() => true, { toJsonSchema: () => fragment })

/**
 * A value that decodes when `is` holds, taken as it is on the wire (JSON, or a query string's text), which the
 * document shows as `jsonSchema` alone: for a field whose documented type is narrower than what the schema accepts.
 */
export const documentedValue = <T>(
  is: (input: unknown) => input is T,
  expected: string,
  jsonSchema: JsonSchema.JsonSchema
) =>
  Schema.declare(is, { expected, toCodecJson: () => undefined, toCodecStringTree: () => undefined }).check(
    documentedAs<T>(jsonSchema)
  )

const isAnything = (_input: unknown): _input is unknown => true

/**
 * How the document shows a value of any type: any JSON value, titled `unknown` (no constraint; as a record's
 * `additionalProperties` it tells client generators the values are unknown, where an absent or empty
 * `additionalProperties` reads to some as "no values"). It carries no `$id`: every field using it would declare one
 * more schema resource of the same id, which validators and linters refuse.
 */
export const AnyJson: JsonSchema.JsonSchema = { title: "unknown" }

/**
 * Any value, taken as it is (nothing walks it: a 4 MiB `state` is not visited twice), which the document shows as
 * `jsonSchema` (by default, {@link AnyJson}).
 */
export const AnyValue = (jsonSchema: JsonSchema.JsonSchema = AnyJson) =>
  documentedValue(isAnything, "unknown", jsonSchema)
