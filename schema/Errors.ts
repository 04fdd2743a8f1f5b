/**
 * Every error code of the contract, one `Schema.TaggedError` each: the tag is the wire code, the HTTP status is
 * annotated on the class. `wire(cls)` is the schema an endpoint lists in its `error` option: its encoded side is the
 * envelope `{error: {code, message, request_id, violations?}}` with `code` fixed to the class's own code, so HttpApi
 * renders it, OpenAPI documents each code as a constant, and a client (HttpApiClient, or one generated from the
 * document) tells the codes of one status apart. The plain-text rejections of the spec's table are tagged errors
 * too, encoded as `text/plain` and told apart by the words their bodies begin with.
 */
import { Context, Effect, Schema, SchemaAST, SchemaGetter, SchemaIssue } from "effect"
import { HttpApiSchema } from "effect/http-api"

/** The request id of the request being served; provided once by the edge, read when an error is encoded. */
export const CurrentRequestId = Context.Reference<string>("arbiter/CurrentRequestId", { defaultValue: () => "" })

interface ApiErrorInstance {
  readonly _tag: string
  readonly message: string
  readonly request_id?: string | undefined
}

/** A class built by `ApiError`: constructible from a message, a schema of itself, with a code and status. */
export interface ApiErrorClass<Self extends ApiErrorInstance = ApiErrorInstance> {
  new(props: { readonly message: string; readonly request_id?: string }): Self
  readonly _tag: string
  readonly ast: SchemaAST.AST
}

/** The status annotated on a schema (`httpApiStatus`, as `HttpApiSchema.status` sets it), 500 when none is. */
const annotatedStatus = (ast: SchemaAST.AST): number => {
  const status = ast.annotations?.httpApiStatus ?? ast.context?.annotations?.httpApiStatus
  return typeof status === "number" ? status : 500
}

/**
 * A tagged error class whose constructor also carries its code as `_tag` (the registry and the boundary list codes
 * by class), with its status and description annotated.
 */
const taggedErrorClass = <Self>() =>
<const Code extends string, const Fields extends Schema.Struct.Fields>(
  code: Code,
  fields: Fields,
  status: number,
  description: string
) => Object.assign(Schema.TaggedError<Self>()(code, fields, { httpApiStatus: status, description }), { _tag: code })

/**
 * `request_id` is set only on an error a client decoded from a response (the envelope's `error.request_id`); the
 * service's own errors leave it out, and the boundary stamps the request's id when it encodes them.
 */
const errorClass = <Self>() => <const Code extends string>(code: Code, status: number, description: string) =>
  taggedErrorClass<Self>()(
    code,
    { message: Schema.String, request_id: Schema.optional(Schema.String) },
    status,
    description
  )

/** The request id the document's examples show. */
export const ExampleRequestId = "req_5f0c6a1e9b2d4c7f8a3e0b6d2c9f1a47"

/** The wire envelope of one code. */
export interface ErrorEnvelope<Code extends string = string> {
  readonly error: { readonly code: Code; readonly message: string; readonly request_id: string }
}

/**
 * The envelope schema of one code: `code` is that code alone, so decoding a response picks the right class. It
 * carries the component's name and description, since the document shows a response's encoded side.
 */
const envelopeOf = <Code extends string>(
  code: Code,
  status: number,
  exampleMessage: string
): Schema.Codec<ErrorEnvelope<Code>> =>
  Schema.Struct({
    error: Schema.Struct({
      code: Schema.Literal(code),
      message: Schema.String.annotate({ description: "diagnostic text; may change; branch on code" }),
      request_id: Schema.String.annotate({ description: "the response's x-request-id" })
    })
  }).annotate({
    identifier: `Error_${code}`,
    description: `${status} ${code}`,
    examples: [{ error: { code, message: exampleMessage, request_id: ExampleRequestId } }]
  })

const wireCache = new WeakMap<object, Schema.Top>()

/** The description annotated on a class. */
const descriptionOf = (ast: SchemaAST.AST): string => SchemaAST.resolveDescription(ast) ?? ""

/** The encoded envelope of an error, stamped with the id of the request being served. */
const stampEnvelope = <Self extends ApiErrorInstance>(error: Self) =>
  Effect.map(Effect.service(CurrentRequestId), (request_id): ErrorEnvelope<Self["_tag"]> => ({
    error: { code: error._tag, message: error.message, request_id }
  }))

/** The envelope schema of an error class (memoized, so every endpoint shares one union member per code). */
export const wire = <Self extends ApiErrorInstance>(
  cls: ApiErrorClass<Self>
): Schema.Codec<Self, ErrorEnvelope<Self["_tag"]>> => {
  const cached = wireCache.get(cls)
  if (cached !== undefined) return cached as any
  const status = annotatedStatus(cls.ast)
  const envelope = envelopeOf(cls._tag as Self["_tag"], status, descriptionOf(cls.ast))
  const schema = envelope.pipe(
    Schema.decodeTo(Schema.toType(cls as unknown as Schema.Codec<Self>), {
      decode: SchemaGetter.transform((envelope: ErrorEnvelope<Self["_tag"]>) =>
        new cls({ message: envelope.error.message, request_id: envelope.error.request_id })
      ),
      encode: SchemaGetter.transformEffect(stampEnvelope<Self>)
    }),
    HttpApiSchema.status(status)
  )
  wireCache.set(cls, schema)
  return schema as any
}

// 400
/** The body (or a runs/router query) does not match the route's schema. */
export class InvalidBody extends errorClass<InvalidBody>()("invalid_body", 400, "Body does not match the schema") {}
/** `Idempotency-Key` is missing on `POST /v1/runs`. */
export class IdempotencyKeyRequired
  extends errorClass<IdempotencyKeyRequired>()("idempotency_key_required", 400, "Idempotency-Key header missing")
{}
/** `Idempotency-Key` is empty, over 255 bytes, or not visible ASCII. */
export class InvalidIdempotencyKey
  extends errorClass<InvalidIdempotencyKey>()("invalid_idempotency_key", 400, "Idempotency-Key malformed")
{}
/** A verdict run's `schema` is not an acceptable JSON Schema. */
export class InvalidVerdictSchema
  extends errorClass<InvalidVerdictSchema>()("invalid_verdict_schema", 400, "Verdict schema rejected")
{}
/** The question set of a decision run is rejected. */
export class InvalidDecisionQuestions
  extends errorClass<InvalidDecisionQuestions>()("invalid_decision_questions", 400, "Question set rejected")
{}
/** `model` is neither the decision model id nor its alias. */
export class UnknownModel extends errorClass<UnknownModel>()("unknown_model", 400, "Unknown decision model") {}
/** A usage query parameter breaks a window or limit rule. */
export class InvalidParameter
  extends errorClass<InvalidParameter>()("invalid_parameter", 400, "Usage query parameter rejected")
{}
/** A key was requested with no scopes. */
export class EmptyScopes extends errorClass<EmptyScopes>()("empty_scopes", 400, "Key scopes list empty") {}
/** The router policy is not one of the four. */
export class InvalidPolicy extends errorClass<InvalidPolicy>()("invalid_policy", 400, "Unknown router policy") {}
/** `weights` was sent with a policy other than `balanced`. */
export class WeightsRequireBalanced
  extends errorClass<WeightsRequireBalanced>()("weights_require_balanced", 400, "Weights need the balanced policy")
{}
/** A model id in the router filters is not in the catalog. */
export class UnknownModelId extends errorClass<UnknownModelId>()("unknown_model_id", 400, "Model id not in catalog") {}
/** The router filters left no model. */
export class NoEligibleModel extends errorClass<NoEligibleModel>()("no_eligible_model", 400, "No model passes the filters") {}
/** A billing amount is outside its bounds. */
export class InvalidAmount extends errorClass<InvalidAmount>()("invalid_amount", 400, "Amount outside its bounds") {}

// 401, 402, 403
/** No bearer credential: no `Authorization` header, another scheme or an empty token. */
export class MissingCredentials
  extends errorClass<MissingCredentials>()("missing_credentials", 401, "No bearer credential")
{}
/** The credential is malformed, unknown, revoked or expired. */
export class InvalidCredential extends errorClass<InvalidCredential>()("invalid_credential", 401, "Credential rejected") {}
/** Billing is on and the available credit cannot hold the run's ceiling. */
export class InsufficientCredits
  extends errorClass<InsufficientCredits>()("insufficient_credits", 402, "Credit cannot cover the run")
{}
/** The credential lacks the route's scope; the message names it. */
export class ScopeDenied extends errorClass<ScopeDenied>()("scope_denied", 403, "Credential lacks the scope") {}
/** A console session with no organization selected. */
export class NoActiveOrganization
  extends errorClass<NoActiveOrganization>()("no_active_organization", 403, "Session has no organization")
{}
/** A key was requested with a scope its creator does not hold; the message names it. */
export class ScopeExceedsCreator
  extends errorClass<ScopeExceedsCreator>()("scope_exceeds_creator", 403, "Scope not held by the creator")
{}
/**
 * A key with limits asked to create a key, or to set limits, looser than its own (decisions.md, Extensions, "Limit
 * containment"); the message names the limit.
 */
export class LimitsExceedCreator
  extends errorClass<LimitsExceedCreator>()("limits_exceed_creator", 403, "Limits looser than the creator's")
{}
/** A key was requested to act as another user. */
export class PrincipalIsNotTheCaller
  extends errorClass<PrincipalIsNotTheCaller>()("principal_is_not_the_caller", 403, "Principal is another user")
{}

// 404, 409
/** No such run in the organization. */
export class RunNotFound extends errorClass<RunNotFound>()("run_not_found", 404, "Run not found") {}
/** No such key in the organization. */
export class KeyNotFound extends errorClass<KeyNotFound>()("key_not_found", 404, "Key not found") {}
/** The idempotency key was used with a different body, or its run is not ready. */
export class IdempotencyConflict
  extends errorClass<IdempotencyConflict>()("idempotency_conflict", 409, "Idempotency key reused")
{}
/** The operation needs an active key. */
export class KeyRevoked extends errorClass<KeyRevoked>()("key_revoked", 409, "Key is revoked") {}
/** Auto-recharge was enabled without a saved payment method. */
export class PaymentMethodRequired
  extends errorClass<PaymentMethodRequired>()("payment_method_required", 409, "No saved payment method")
{}

// 413, 429
/** The body is over 4 MiB on a large-body route. */
export class BodyTooLarge extends errorClass<BodyTooLarge>()("body_too_large", 413, "Body over 4 MiB") {}
/** The estimated input is over the run's limit or the model's own. */
export class InputTooLarge extends errorClass<InputTooLarge>()("input_too_large", 413, "Input over the limit") {}
/** The period token quota cannot cover the run; the message names the numbers compared. */
export class OrganizationTokenQuotaExhausted extends errorClass<OrganizationTokenQuotaExhausted>()(
  "organization_token_quota_exhausted",
  429,
  "Token quota for the period cannot cover the run"
) {}
/** The period spend quota cannot cover the run's ceiling; the message names the numbers compared. */
export class OrganizationSpendQuotaExhausted extends errorClass<OrganizationSpendQuotaExhausted>()(
  "organization_spend_quota_exhausted",
  429,
  "Spend quota for the period cannot cover the run"
) {}

/** A key's own spend or token limit for its period cannot cover the run (decisions.md, Extensions). */
export class KeyQuotaExhausted extends errorClass<KeyQuotaExhausted>()(
  "key_quota_exhausted",
  429,
  "The API key's spend or token limit for its period cannot cover the run"
) {}

/**
 * A key's `runs_per_minute` bucket is empty. `retry_after_seconds` (whole seconds until a run fits again) becomes the
 * response's `Retry-After` header; it is not part of the JSON envelope.
 */
export class KeyRateLimited extends taggedErrorClass<KeyRateLimited>()(
  "key_rate_limited",
  {
    message: Schema.String,
    request_id: Schema.optional(Schema.String),
    retry_after_seconds: Schema.optional(Schema.Int)
  },
  429,
  "The API key's runs_per_minute limit is reached; see Retry-After"
) {}

// 500
/** An unexpected failure; its cause is logged, never sent. */
export class InternalError extends errorClass<InternalError>()("internal_error", 500, "Internal failure") {}

// 503, 504
/** No route serves the run (verdict runs today). */
export class NoRouteAvailable extends errorClass<NoRouteAvailable>()("no_route_available", 503, "No route available") {}
/** The model's answer could not be read as a decision. */
export class DecisionUnavailable
  extends errorClass<DecisionUnavailable>()("decision_unavailable", 503, "Decision could not be read")
{}
/** The upstream model limited the service's traffic (after retries). */
export class ProviderRateLimited
  extends errorClass<ProviderRateLimited>()("provider_rate_limited", 503, "Upstream rate limited")
{}
/** The upstream model failed with 5xx or could not be reached (after retries). */
export class ProviderUnavailable
  extends errorClass<ProviderUnavailable>()("provider_unavailable", 503, "Upstream unavailable")
{}
/** The upstream model answered with a body that could not be read. */
export class ProviderBadResponse
  extends errorClass<ProviderBadResponse>()("provider_bad_response", 503, "Upstream response unreadable")
{}
/** The verdict document broke the caller's schema. */
export class VerdictSchemaViolation
  extends taggedErrorClass<VerdictSchemaViolation>()(
    "verdict_schema_violation",
    {
      message: Schema.String,
      violations: Schema.optional(Schema.Array(Schema.String)),
      request_id: Schema.optional(Schema.String)
    },
    503,
    "Verdict broke the schema"
  )
{}
/** A further model call would pass the run's spend ceiling. */
export class BudgetExhausted extends errorClass<BudgetExhausted>()("budget_exhausted", 503, "Spend ceiling reached") {}
/** Session tokens arrived while no trust keys are configured. */
export class AuthNotConfigured
  extends errorClass<AuthNotConfigured>()("auth_not_configured", 503, "Console sessions not configured")
{}
/** The console's trust keys cannot be fetched and none are cached. */
export class TrustKeysUnavailable
  extends errorClass<TrustKeysUnavailable>()("trust_keys_unavailable", 503, "Trust keys unavailable")
{}
/** The database does not answer. */
export class DatabaseUnavailable
  extends errorClass<DatabaseUnavailable>()("database_unavailable", 503, "Database unavailable")
{}
/** A dependency the route needs is not configured. */
export class NotConfigured extends errorClass<NotConfigured>()("not_configured", 503, "Dependency not configured") {}
/** The run's deadline passed. */
export class DeadlineExceeded extends errorClass<DeadlineExceeded>()("deadline_exceeded", 504, "Deadline passed") {}

/** The wire form of `verdict_schema_violation` (exported for the declarations of the types that use it). */
export interface ViolationsEnvelope {
  readonly error: {
    readonly code: "verdict_schema_violation"
    readonly message: string
    readonly request_id: string
    readonly violations?: ReadonlyArray<string>
  }
}

const ViolationsEnvelope: Schema.Codec<ViolationsEnvelope> = Schema.Struct({
  error: Schema.Struct({
    code: Schema.Literal("verdict_schema_violation"),
    message: Schema.String.annotate({ description: "diagnostic text; may change; branch on code" }),
    request_id: Schema.String.annotate({ description: "the response's x-request-id" }),
    violations: Schema.optionalKey(Schema.Array(Schema.String).annotate({
      description: "up to 10 JSON Pointers into the rejected document; omitted when the model returned none"
    }))
  })
}).annotate({
  identifier: "Error_verdict_schema_violation",
  description: "503 verdict_schema_violation",
  examples: [{
    error: {
      code: "verdict_schema_violation",
      message: "the verdict does not match the schema",
      request_id: ExampleRequestId,
      violations: ["/score"]
    }
  }]
})

/** The envelope of `verdict_schema_violation`, the one code that carries `violations` (at most 10 are sent). */
export const VerdictSchemaViolationWire: Schema.Codec<VerdictSchemaViolation, ViolationsEnvelope> = ViolationsEnvelope
  .pipe(
    Schema.decodeTo(Schema.toType(VerdictSchemaViolation), {
      decode: SchemaGetter.transform((envelope: ViolationsEnvelope) =>
        new VerdictSchemaViolation({
          message: envelope.error.message,
          request_id: envelope.error.request_id,
          ...(envelope.error.violations === undefined ? {} : { violations: envelope.error.violations })
        })
      ),
      encode: SchemaGetter.transformEffect((error: VerdictSchemaViolation) =>
        Effect.map(Effect.service(CurrentRequestId), (request_id): ViolationsEnvelope => ({
          error: {
            code: error._tag,
            message: error.message,
            request_id,
            ...(error.violations === undefined ? {} : { violations: error.violations.slice(0, 10) })
          }
        }))
      )
    }),
    HttpApiSchema.status(503)
  )

/** Every JSON error class, for the registry test and the error table in the docs. */
export const ErrorClasses: ReadonlyArray<ApiErrorClass> = [
  InvalidBody, IdempotencyKeyRequired, InvalidIdempotencyKey, InvalidVerdictSchema, InvalidDecisionQuestions,
  UnknownModel, InvalidParameter, EmptyScopes, InvalidPolicy, WeightsRequireBalanced, UnknownModelId,
  NoEligibleModel, InvalidAmount, MissingCredentials, InvalidCredential, InsufficientCredits, ScopeDenied,
  NoActiveOrganization, ScopeExceedsCreator, LimitsExceedCreator, PrincipalIsNotTheCaller, RunNotFound, KeyNotFound,
  IdempotencyConflict, KeyRevoked, PaymentMethodRequired, BodyTooLarge, InputTooLarge,
  OrganizationTokenQuotaExhausted, OrganizationSpendQuotaExhausted, KeyQuotaExhausted, KeyRateLimited, InternalError, NoRouteAvailable,
  DecisionUnavailable, ProviderRateLimited, ProviderUnavailable, ProviderBadResponse,
  VerdictSchemaViolation as unknown as ApiErrorClass, BudgetExhausted, AuthNotConfigured, TrustKeysUnavailable,
  DatabaseUnavailable, NotConfigured, DeadlineExceeded
]

/** The HTTP status of an error class, as annotated. */
export const statusOf = (cls: ApiErrorClass): number => annotatedStatus(cls.ast)

/** An error value of any class above. */
export type ApiError = InstanceType<(typeof ErrorClasses)[number]>

/** True for a value of one of the contract's error classes. */
export const isApiError = (u: unknown): u is ApiErrorInstance =>
  typeof u === "object" && u !== null && ErrorClasses.some((cls) => u instanceof (cls as any))

// Plain-text rejections (spec, "Plain-text rejections"): no JSON, no request_id in the body.

const textClass = <Self>() => <const Tag extends string>(tag: Tag, status: number, description: string) =>
  taggedErrorClass<Self>()(tag, { text: Schema.String }, status, description)

/** Malformed JSON on a keys or billing route. */
export class JsonSyntaxRejection
  extends textClass<JsonSyntaxRejection>()("JsonSyntaxRejection", 400, "Failed to parse the request body as JSON")
{}
/** Unknown or malformed query parameter on a keys, billing or usage route. */
export class QueryStringRejection
  extends textClass<QueryStringRejection>()("QueryStringRejection", 400, "Failed to deserialize query string")
{}
/** Body over 1 MiB on a route other than the two large-body routes. */
export class PayloadTooLargeRejection
  extends textClass<PayloadTooLargeRejection>()("PayloadTooLargeRejection", 413, "Failed to buffer the request body")
{}
/** Missing or wrong content type on a keys or billing route. */
export class UnsupportedMediaTypeRejection extends textClass<UnsupportedMediaTypeRejection>()(
  "UnsupportedMediaTypeRejection",
  415,
  "Expected request with `Content-Type: application/json`"
) {}
/** Wrong type, missing field or unknown field on a keys or billing route. */
export class JsonDataRejection extends textClass<JsonDataRejection>()(
  "JsonDataRejection",
  422,
  "Failed to deserialize the JSON body into the target type"
) {}

interface TextRejectionInstance {
  readonly _tag: string
  readonly text: string
}

const textCache = new WeakMap<object, Schema.Top>()

/**
 * The `text/plain` schema of a rejection class. A body decodes to the class only when it begins with the class's
 * words (its description), so a client tells the two plain-text 400s apart; encoding is unchecked. The document
 * shows it as a plain string (the decoded side names no component).
 */
export const wireText = <Self extends TextRejectionInstance>(
  cls: { readonly ast: SchemaAST.AST } & (new(props: { readonly text: string }) => Self)
): Schema.Codec<Self, string> => {
  const cached = textCache.get(cls)
  if (cached !== undefined) return cached as any
  const status = annotatedStatus(cls.ast)
  const words = descriptionOf(cls.ast)
  const description = `${status} plain-text rejection`
  const schema = Schema.String.annotate({ description }).pipe(
    Schema.decodeTo(Schema.declare((input: unknown): input is Self => input instanceof cls), {
      decode: SchemaGetter.transformEffect((text: string) =>
        text.startsWith(words)
          ? Effect.succeed(new cls({ text }))
          : Effect.fail(new SchemaIssue.InvalidValue({ message: `a body beginning with "${words}"` }, text))
      ),
      encode: SchemaGetter.transform((rejection: Self) => rejection.text)
    }),
    HttpApiSchema.asText({ contentType: "text/plain; charset=utf-8" }),
    HttpApiSchema.status(status)
  ).annotate({ description })
  textCache.set(cls, schema)
  return schema as any
}
