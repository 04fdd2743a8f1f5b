/**
 * A record whose keys the caller chooses (question ids, option names, state fields): decoded into an object with no
 * prototype, so every key is an ordinary own key. `Schema.Record` decodes into `{}`, where `constructor` or
 * `toString` read as inherited functions when the caller did not send them; here a key is present only when sent,
 * and `__proto__` is data like any other key. The wire shape, its errors and its OpenAPI description are a record's.
 */
import { Schema, SchemaGetter } from "effect"

/** The decoded side: any object (the record's own schema has checked it), taken as it is. */
const isObject = (input: unknown): input is object => typeof input === "object" && input !== null

/** A string-keyed record of `value`s whose decoded object has no prototype (see the module header). */
export const CallerRecord = <V extends Schema.Top>(value: V) => {
  const record = Schema.Record(Schema.String, value)
  type Decoded = typeof record.Type
  return record.pipe(
    Schema.decodeTo(Schema.declare(isObject as (input: unknown) => input is Decoded), {
      decode: SchemaGetter.transform((decoded: Decoded): Decoded => Object.assign(Object.create(null), decoded)),
      encode: SchemaGetter.passthrough()
    })
  )
}
