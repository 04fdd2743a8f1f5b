/**
 * API keys (spec, "API keys"; decisions.md, "Keys, members, sessions"). Body and query problems on these routes are
 * the plain-text rejections. Another organization's key is `404 key_not_found`, exactly like an unknown one.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "./Auth.js"
import { PlainRequestShape } from "./Boundary.js"
import {
  EmptyScopes,
  KeyNotFound,
  KeyRevoked,
  PrincipalIsNotTheCaller,
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
import { PlainRouteErrors } from "./RouteErrors.js"
import { RequiredScope, ScopeSchema } from "./Scope.js"
import { StrictStruct } from "./Strict.js"

/** Who a key acts as. */
export const PrincipalWire = Schema.Struct({
  type: Schema.Literals(["user", "service_account"]),
  id: Schema.String
})

const Limit = Schema.NullOr(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)))

/** The period a key's spend and token limits count over. */
export const KeyPeriod = Schema.Literals(["day", "month", "total"]).annotate({
  description: "day and month are UTC calendar periods; total never resets"
})

/** A key's limits (decisions.md, Extensions): each null when unset. */
export const KeyLimits = Schema.Struct({
  spend_micros: Limit.annotate({ description: "settled + reserved spend of the key's runs in the period, at most" }),
  tokens: Limit.annotate({ description: "settled + reserved tokens of the key's runs in the period, at most" }),
  runs_per_minute: Schema.NullOr(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))).annotate({
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
  spend_micros: Schema.optionalKey(Limit),
  tokens: Schema.optionalKey(Limit),
  runs_per_minute: Schema.optionalKey(
    Schema.NullOr(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1_000_000 })))
  ),
  period: Schema.optionalKey(KeyPeriod)
})

/** `PATCH /v1/keys/{key_id}` body. */
export const UpdateKeyRequest = StrictStruct({ limits: KeyLimitsRequest })

/** A key as the API shows it: never its secret, except once in `KeyWithSecret`. */
export const Key = Schema.Struct({
  id: Schema.String.annotate({ description: "key_ + 32 hex" }),
  name: Schema.String,
  principal: PrincipalWire,
  scopes: Schema.Array(ScopeSchema).annotate({ description: "sorted, deduplicated, frozen at creation" }),
  state: Schema.Literals(["active", "revoked"]),
  secret_prefix: Schema.String.annotate({ description: "otsk_ + the first 8 hex of the secret" }),
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
  secret: Schema.String.annotate({ description: "otsk_ + 64 lowercase hex; shown once" })
})

/** `POST /v1/keys` body. */
export const CreateKeyRequest = StrictStruct({
  name: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)),
  scopes: Schema.Array(ScopeSchema),
  principal: Schema.optionalKey(
    Schema.Union([
      StrictStruct({ type: Schema.Literal("user"), id: Schema.String.check(Schema.isMinLength(1)) }),
      StrictStruct({
        type: Schema.Literal("service_account"),
        id: Schema.String.check(Schema.isPattern(/^[A-Za-z0-9._-]{1,128}$/u))
      })
    ])
  ),
  limits: Schema.optionalKey(KeyLimitsRequest)
})

const KeyIdPath = Schema.Struct({ key_id: Schema.String })

/** The keys group. */
export class KeysApi extends HttpApiGroup.make("keys")
  .add(
    HttpApiEndpoint.get("list", "/v1/keys", {
      success: Schema.Struct({ keys: Schema.Array(Key) }),
      error: PlainRouteErrors
    })
      .annotate(RequiredScope, "keys_read")
      .annotate(OpenApi.Summary, "Every key of the organization, newest first")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          responses: {
            200: {
              summary: "a CI key and the owner's key",
              value: KeyListExample satisfies { readonly keys: ReadonlyArray<typeof Key.Encoded> }
            }
          }
        })
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/keys/:key_id", {
      params: KeyIdPath,
      success: Key,
      error: [...PlainRouteErrors, wire(KeyNotFound)]
    })
      .annotate(RequiredScope, "keys_read")
      .annotate(OpenApi.Summary, "One key")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          parameters: { key_id: ExampleKeyId },
          responses: { 200: { summary: "an active key", value: KeyExample satisfies typeof Key.Encoded } }
        })
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/v1/keys", {
      payload: CreateKeyRequest,
      success: KeyWithSecret.pipe(HttpApiSchema.status(201)),
      error: [...PlainRouteErrors, wire(EmptyScopes), wire(ScopeExceedsCreator), wire(LimitsExceedCreator), wire(PrincipalIsNotTheCaller)]
    })
      .annotate(RequiredScope, "keys_write")
      .annotate(OpenApi.Summary, "Create a key; its secret is shown once")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          request: CreateKeyRequestExample satisfies typeof CreateKeyRequest.Encoded,
          responses: {
            201: {
              summary: "the new key with its secret (shown once)",
              value: CreatedKeyExample satisfies typeof KeyWithSecret.Encoded
            }
          }
        })
      )
  )
  .add(
    HttpApiEndpoint.delete("revoke", "/v1/keys/:key_id", {
      params: KeyIdPath,
      success: Key,
      error: [...PlainRouteErrors, wire(KeyNotFound)]
    })
      .annotate(RequiredScope, "keys_write")
      .annotate(OpenApi.Summary, "Revoke a key (idempotent); returns the revoked key")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          parameters: { key_id: ExampleKeyId },
          responses: { 200: { summary: "the revoked key", value: RevokedKeyExample satisfies typeof Key.Encoded } }
        })
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/keys/:key_id", {
      params: KeyIdPath,
      payload: UpdateKeyRequest,
      success: Key,
      error: [...PlainRouteErrors, wire(KeyNotFound), wire(KeyRevoked), wire(LimitsExceedCreator)]
    })
      .annotate(RequiredScope, "keys_write")
      .annotate(OpenApi.Summary, "Change a key's limits; returns the key with its usage")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          parameters: { key_id: ExampleKeyId },
          request: UpdateKeyRequestExample satisfies typeof UpdateKeyRequest.Encoded,
          responses: {
            200: {
              summary: "the key under its new limits",
              value: LimitedKeyExample satisfies typeof Key.Encoded
            }
          }
        })
      )
  )
  .add(
    HttpApiEndpoint.post("rotate", "/v1/keys/:key_id/rotate", {
      params: KeyIdPath,
      success: KeyWithSecret,
      error: [...PlainRouteErrors, wire(KeyNotFound), wire(KeyRevoked)]
    })
      .annotate(RequiredScope, "keys_write")
      .annotate(OpenApi.Summary, "Issue a new secret; the previous one stops working at once")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          parameters: { key_id: ExampleKeyId },
          responses: {
            200: {
              summary: "the key with its new secret (shown once)",
              value: RotatedKeyExample satisfies typeof KeyWithSecret.Encoded
            }
          }
        })
      )
  )
  .middleware(PlainRequestShape)
  .middleware(Authentication)
  .annotate(OpenApi.Description, "The organization's API keys: list, read, create, limit, rotate and revoke them.")
{}
