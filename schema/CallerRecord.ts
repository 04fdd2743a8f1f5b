/**
 * A record whose keys the caller chooses (question ids, option names, state fields): decoded into an object with no
 * prototype, so every key is an ordinary own key. `Schema.Record` decodes into `{}`, where a `__proto__` key sets
 * the prototype instead (the member silently vanishes) and `constructor` or `toString` read as inherited functions;
 * here both are data like any other key. The wire shape, its errors and its OpenAPI description are a record's.
 */
import { Either, ParseResult, Schema, SchemaAST } from "effect"

const isPlainObject = (input: unknown): input is Readonly<Record<string, unknown>> =>
  typeof input === "object" && input !== null && !Array.isArray(input)

/** Maps every own key of an object through `parse`, into an object with no prototype; the first failure wins. */
const eachValue = (
  parse: (value: unknown, options: SchemaAST.ParseOptions | undefined) => Either.Either<unknown, ParseResult.ParseIssue>
) =>
(input: unknown, options: SchemaAST.ParseOptions | undefined, ast: SchemaAST.AST) => {
  if (!isPlainObject(input)) return ParseResult.fail(new ParseResult.Type(ast, input))
  const output: Record<string, unknown> = Object.create(null)
  for (const key of Object.keys(input)) {
    const parsed = parse(input[key], options)
    if (Either.isLeft(parsed)) {
      return ParseResult.fail(new ParseResult.Composite(ast, input, new ParseResult.Pointer(key, input, parsed.left)))
    }
    output[key] = parsed.right
  }
  return ParseResult.succeed(output)
}

/** A string-keyed record of `value`s whose decoded object has no prototype (see the module header). */
export const CallerRecord = <V extends Schema.Schema.Any>(value: V) =>
  Schema.declare(
    [value],
    {
      decode: (item) => eachValue(ParseResult.decodeUnknownEither(item)),
      encode: (item) => eachValue(ParseResult.encodeUnknownEither(item))
    },
    {
      [SchemaAST.SurrogateAnnotationId]: Schema.Record({ key: Schema.String, value }).ast
    }
  ) as unknown as Schema.Schema<
    { readonly [key: string]: Schema.Schema.Type<V> },
    { readonly [key: string]: Schema.Schema.Encoded<V> },
    Schema.Schema.Context<V>
  >
