/**
 * The `Idempotency-Key` request header (spec, "Idempotency on `POST /v1/runs`"): 1 to 255 bytes of visible ASCII,
 * scoped per organization; required on `POST /v1/runs`, optional on `POST /v1/router/select`. These schemas declare
 * it for the OpenAPI document and for clients (a typed client must send it on `POST /v1/runs`), but never refuse a
 * request themselves: the service checks the key after the credential, the body and the scope (check order step 4)
 * and answers `400 idempotency_key_required` or `400 invalid_idempotency_key`, so the server decodes any value, or
 * none. The document states the contract: required where it is, with its pattern.
 */
import { Effect, Schema } from "effect"
import { documentedAs } from "./Documented.js"

/** What a key must be: 1 to 255 bytes of visible ASCII (0x21 to 0x7E). */
export const IdempotencyKeyPattern = /^[\x21-\x7e]{1,255}$/

/** The header's wire name (HTTP header names are case-insensitive; Node hands them over lower-cased). */
export const IdempotencyKeyHeaderName = "idempotency-key"

/** A key as the document shows it (not checked here: see the module header). */
const KeyValue = (description: string, example: string) =>
  Schema.String.check(documentedAs({ minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7E]{1,255}$" })).annotate({
    description,
    examples: [example]
  })

/**
 * `POST /v1/runs`: a client must send the key (its type requires it), while a request without one still reaches the
 * handler, which answers `400 idempotency_key_required` in the contract's check order; the decoded value is never
 * read there (the handler reads the request's own header, so a missing key and an empty one stay apart).
 */
export const RequiredIdempotencyKey = Schema.Struct({
  [IdempotencyKeyHeaderName]: KeyValue(
    "required: 1 to 255 bytes of visible ASCII, scoped to the organization, never expires. The same key and body " +
      "replay the run (200 replayed, or 202 while pending) without a second charge; another body under it is 409 " +
      "idempotency_conflict. Missing: 400 idempotency_key_required; malformed: 400 invalid_idempotency_key.",
    "ticket-4711-triage"
  ).pipe(Schema.withDecodingDefaultTypeKey(Effect.succeed("")))
})

/** `POST /v1/router/select`: an optional key; the same key and body replay the stored selection. */
export const OptionalIdempotencyKey = Schema.Struct({
  [IdempotencyKeyHeaderName]: Schema.optionalKey(KeyValue(
    "optional; 1 to 255 bytes of visible ASCII; the same key and body replay the stored selection (replayed true, " +
      "no charge), another body under it is 409 idempotency_conflict; malformed: 400 invalid_idempotency_key",
    "select-4711"
  ))
})
