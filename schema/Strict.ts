/**
 * Request schemas that refuse what they do not define (spec, cross-cutting rule 5). Bodies and query strings are
 * decoded with `onExcessProperty: "error"` ({@link StrictParseOptions}), which nested structs and array items
 * inherit: the API carries it as its payload and query parse options (schema/Api.ts), so every `StrictStruct` of a
 * body or a query rejects unknown keys at every depth. A struct names that intent; the refusal is the parse option's.
 */
import { Schema, SchemaTransformation } from "effect"
import type { SchemaAST } from "effect"

/** The parse options of bodies and query strings: an unknown key is an error, at every depth. */
export const StrictParseOptions: SchemaAST.ParseOptions = { onExcessProperty: "error" }

/** A struct of a body or a query, decoded under {@link StrictParseOptions}. */
export const StrictStruct = <const Fields extends Schema.Struct.Fields>(fields: Fields): Schema.Struct<Fields> =>
  Schema.Struct(fields)

/**
 * A whole number in a query string, of any length ("20", "-3", "99999999999999999999999"; not "2.5", "1e3", "+5" or
 * ""). It decodes to the nearest double: exact up to 2^53, beyond that approximate (a few hundred digits and more:
 * plus or minus Infinity), so a caller clamps it into the range it serves rather than trusting its last digits.
 */
export const wholeNumberFromString = (description = "a whole number (digits, optionally after a minus sign)") =>
  Schema.String.check(Schema.isPattern(/^-?\d+$/u, { message: "expected a whole number", description })).pipe(
    Schema.decodeTo(Schema.Number, SchemaTransformation.numberFromString)
  )

/** {@link wholeNumberFromString} with its default description. */
export const WholeNumberFromString = wholeNumberFromString()

/** A field that may also be sent as `null` or left out (never as anything else). */
export const OptionalNullable = <S extends Schema.Top>(schema: S) => Schema.optionalKey(Schema.NullOr(schema))
