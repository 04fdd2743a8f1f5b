/**
 * API keys (spec, "API keys"; decisions.md, "Keys, members, sessions"). Body and query problems on these routes are
 * the plain-text rejections. Another organization's key is `404 key_not_found`, exactly like an unknown one.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "./Auth.js"
import { PlainRequestShape } from "./Boundary.js"
import {
  EmptyScopes,
  KeyNotFound,
  KeyRevoked,
  PrincipalIsNotTheCaller,
  ScopeDenied,
  LimitsExceedCreator,
  ScopeExceedsCreator,
  wire
} from "./Errors.js"
import { Timestamp } from "./Ids.js"
import {
  CreatedKeyExample,
  CreateKeyRequestExample,
  ExampleKeyId,
  KeyExample,
  KeyListExample,
  LimitedKeyExample,
  RevokedKeyExample,
  RotatedKeyExample,
  UpdateKeyRequestExample
} from "./KeysExamples.js"
import { operationDocs } from "./OperationDocs.js"
import { RequiredScope, ScopeSchema } from "./Scope.js"
import { StrictStruct } from "./Strict.js"

/** Who a key acts as. */
export const PrincipalWire = Schema.Struct({
  type: Schema.Literal("user", "service_account"),
  id: Schema.String
})

const Limit = Schema.NullOr(Schema.Int.pipe(Schema.nonNegative()))

/** The period a key's spend and token limits count over. */
export const KeyPeriod = Schema.Literal("day", "month", "total").annotations({
  description: "day and month are UTC calendar periods; total never resets"
})

/** A key's limits (decisions.md, Extensions): each null when unset. */
export const KeyLimits = Schema.Struct({
  spend_micros: Limit.annotations({ description: "settled + reserved spend of the key's runs in the period, at most" }),
  tokens: Limit.annotations({ description: "settled + reserved tokens of the key's runs in the period, at most" }),
  runs_per_minute: Schema.NullOr(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))).annotations({
    description: "a token bucket of this size, refilled at this many runs per minute"
  }),
  period: KeyPeriod
})

/** A key's usage in its current period; a remaining figure is null where its limit is. */
export const KeyUsage = Schema.Struct({
  period_start_at: Timestamp,
  spend_settled_micros: Schema.Int,
  spend_reserved_micros: Schema.Int,
  spend_remaining_micros: Schema.NullOr(Schema.Int),
  tokens_settled: Schema.Int,
  tokens_reserved: Schema.Int,
  tokens_remaining: Schema.NullOr(Schema.Int)
})

/** Limits as a request sets them: a field left out keeps its value (null clears it; `period` defaults to month). */
export const KeyLimitsRequest = StrictStruct({
  spend_micros: Schema.optional(Limit),
  tokens: Schema.optional(Limit),
  runs_per_minute: Schema.optional(Schema.NullOr(Schema.Int.pipe(Schema.between(1, 1_000_000)))),
  period: Schema.optional(KeyPeriod)
})

/** `PATCH /v1/keys/{key_id}` body. */
export const UpdateKeyRequest = StrictStruct({ limits: KeyLimitsRequest })

/** A key as the API shows it: never its secret, except once in `KeyWithSecret`. */
export const Key = Schema.Struct({
  id: Schema.String.annotations({ description: "key_ + 32 hex" }),
  name: Schema.String,
  principal: PrincipalWire,
  scopes: Schema.Array(ScopeSchema).annotations({ description: "sorted, deduplicated, frozen at creation" }),
  state: Schema.Literal("active", "revoked"),
  secret_prefix: Schema.String.annotations({ description: "otsk_ + the first 8 hex of the secret" }),
  created_by: Schema.String,
  created_at: Timestamp,
  last_used_at: Schema.NullOr(Timestamp),
  revoked_at: Schema.NullOr(Timestamp),
  limits: KeyLimits,
  usage: KeyUsage
})

/** A key with its secret: the create and rotate responses only. */
export const KeyWithSecret = Schema.Struct({
  ...Key.fields,
  secret: Schema.String.annotations({ description: "otsk_ + 64 lowercase hex; shown once" })
})

/** `POST /v1/keys` body. */
export const CreateKeyRequest = StrictStruct({
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  scopes: Schema.Array(ScopeSchema),
  principal: Schema.optional(
    Schema.Union(
      StrictStruct({ type: Schema.Literal("user"), id: Schema.String.pipe(Schema.minLength(1)) }),
      StrictStruct({
        type: Schema.Literal("service_account"),
        id: Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9._-]{1,128}$/))
      })
    )
  ),
  limits: Schema.optional(KeyLimitsRequest)
})

const KeyIdPath = Schema.Struct({ key_id: Schema.String })

/** The keys group. */
export class KeysApi extends HttpApiGroup.make("keys")
  .add(
    HttpApiEndpoint.get("list", "/v1/keys")
      .addSuccess(Schema.Struct({ keys: Schema.Array(Key) }))
      .annotate(RequiredScope, "keys_read")
      .annotate(OpenApi.Summary, "Every key of the organization, newest first")
      .annotate(
        OpenApi.Transform,
        operationDocs({ responses: { 200: { summary: "a CI key and the owner's key", value: KeyListExample } } })
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/keys/:key_id")
      .setPath(KeyIdPath)
      .addSuccess(Key)
      .addError(wire(KeyNotFound))
      .annotate(RequiredScope, "keys_read")
      .annotate(OpenApi.Summary, "One key")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          parameters: { key_id: ExampleKeyId },
          responses: { 200: { summary: "an active key", value: KeyExample } }
        })
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/v1/keys")
      .setPayload(CreateKeyRequest)
      .addSuccess(KeyWithSecret, { status: 201 })
      .addError(wire(EmptyScopes))
      .addError(wire(ScopeExceedsCreator))
      .addError(wire(LimitsExceedCreator))
      .addError(wire(PrincipalIsNotTheCaller))
      .annotate(RequiredScope, "keys_write")
      .annotate(OpenApi.Summary, "Create a key; its secret is shown once")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          request: CreateKeyRequestExample,
          responses: { 201: { summary: "the new key with its secret (shown once)", value: CreatedKeyExample } }
        })
      )
  )
  .add(
    HttpApiEndpoint.del("revoke", "/v1/keys/:key_id")
      .setPath(KeyIdPath)
      .addSuccess(Key)
      .addError(wire(KeyNotFound))
      .annotate(RequiredScope, "keys_write")
      .annotate(OpenApi.Summary, "Revoke a key (idempotent); returns the revoked key")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          parameters: { key_id: ExampleKeyId },
          responses: { 200: { summary: "the revoked key", value: RevokedKeyExample } }
        })
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/keys/:key_id")
      .setPath(KeyIdPath)
      .setPayload(UpdateKeyRequest)
      .addSuccess(Key)
      .addError(wire(KeyNotFound))
      .addError(wire(KeyRevoked))
      .addError(wire(LimitsExceedCreator))
      .annotate(RequiredScope, "keys_write")
      .annotate(OpenApi.Summary, "Change a key's limits; returns the key with its usage")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          parameters: { key_id: ExampleKeyId },
          request: UpdateKeyRequestExample,
          responses: { 200: { summary: "the key under its new limits", value: LimitedKeyExample } }
        })
      )
  )
  .add(
    HttpApiEndpoint.post("rotate", "/v1/keys/:key_id/rotate")
      .setPath(KeyIdPath)
      .addSuccess(KeyWithSecret)
      .addError(wire(KeyNotFound))
      .addError(wire(KeyRevoked))
      .annotate(RequiredScope, "keys_write")
      .annotate(OpenApi.Summary, "Issue a new secret; the previous one stops working at once")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          parameters: { key_id: ExampleKeyId },
          responses: { 200: { summary: "the key with its new secret (shown once)", value: RotatedKeyExample } }
        })
      )
  )
  .addError(wire(ScopeDenied))
  .middleware(PlainRequestShape)
  .middleware(Authentication)
{}
