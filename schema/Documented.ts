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
export const documentedValue = <T>(is: (input: unknown) => input is T, expected: string, jsonSchema: JsonSchema.JsonSchema) =>
  Schema.declare(is, { expected, toCodecJson: () => undefined, toCodecStringTree: () => undefined }).check(
    documentedAs<T>(jsonSchema)
  )

const isAnything = (_input: unknown): _input is unknown => true

/**
 * Any value, taken as it is (nothing walks it: a 4 MiB `state` is not visited twice), which the document shows as
 * `jsonSchema` (by default, any JSON value).
 */
export const AnyValue = (jsonSchema: JsonSchema.JsonSchema = {}) => documentedValue(isAnything, "unknown", jsonSchema)
