/**
 * Request schemas that refuse what they do not define (spec, cross-cutting rule 5): bodies and query strings are
 * decoded with `onExcessProperty: "error"`, which nested structs and array items inherit.
 */
import { Schema } from "effect"

/** A struct that rejects unknown keys, at every depth. */
export const StrictStruct = <Fields extends Schema.Struct.Fields>(fields: Fields) =>
  Schema.Struct(fields).annotations({ parseOptions: { onExcessProperty: "error" } })

/**
 * A whole number in a query string, of any length ("20", "-3", "99999999999999999999999"; not "2.5", "1e3", "+5" or
 * ""). It decodes to the nearest double: exact up to 2^53, beyond that approximate (a few hundred digits and more:
 * plus or minus Infinity), so a caller clamps it into the range it serves rather than trusting its last digits.
 */
export const wholeNumberFromString = (description = "a whole number (digits, optionally after a minus sign)") =>
  Schema.String.pipe(
    Schema.pattern(/^-?\d+$/, { message: () => "expected a whole number", description }),
    Schema.compose(Schema.NumberFromString)
  )

/** {@link wholeNumberFromString} with its default description. */
export const WholeNumberFromString = wholeNumberFromString()

/** A string field that may also be sent as `null` or left out. */
export const OptionalNullable = <S extends Schema.Schema.Any>(schema: S) =>
  Schema.optionalWith(Schema.NullOr(schema), { exact: true })
