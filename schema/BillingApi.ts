/**
 * Billing (spec, "Billing"; decisions.md, "Billing"). Body and query problems here are the plain-text rejections;
 * amount fields are unsigned (a negative one, or one that is not a number, is the plain-text 422), and any other
 * number outside its bounds, not whole or beyond exact integers is `400 invalid_amount`, checked by the service.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Authentication } from "./Auth.js"
import { PlainRequestShape } from "./Boundary.js"
import { documentedValue } from "./Documented.js"
import { InvalidAmount, NotConfigured, PaymentMethodRequired, wire } from "./Errors.js"
import {
  AutoRechargeExample,
  AutoRechargeRequestExample,
  BillingSummaryExample,
  CheckoutExample,
  CheckoutRequestExample,
  PortalExample
} from "./BillingExamples.js"
import { Timestamp } from "./Ids.js"
import { operationDocs } from "./OperationDocs.js"
import { PlainRouteErrors } from "./RouteErrors.js"
import { RequiredScope } from "./Scope.js"
import { StrictStruct } from "./Strict.js"

const Micros = Schema.Int.annotate({ description: "micro-USD (1,000,000 = 1 US dollar)" })

/** The amounts a request field accepts, for the document. */
interface AcceptedMicros {
  readonly minimum: number
  readonly maximum: number
  readonly multipleOf?: number
  readonly description: string
}

/** Any number, as JSON.parse reads one (`1e400` is Infinity, an amount out of bounds rather than a wrong type). */
const isNumber = (input: unknown): input is number => typeof input === "number"

/**
 * An amount field of a request body: any JSON number that is not negative. Whether it is a whole number within its
 * bounds is the service's check (`400 invalid_amount`, like any other out-of-range amount), so `1e30` or `2.5` is
 * not a schema mismatch; the document still describes the amounts the service accepts.
 */
const RequestMicros = (accepted: AcceptedMicros) =>
  documentedValue(isNumber, "number", {
    type: "integer",
    minimum: accepted.minimum,
    maximum: accepted.maximum,
    ...(accepted.multipleOf === undefined ? {} : { multipleOf: accepted.multipleOf }),
    description: `${accepted.description}; a negative value or a non-number is the plain-text 422, any other ` +
      "number outside these bounds (or not a whole number) is 400 invalid_amount"
  }).check(Schema.isGreaterThanOrEqualTo(0))

/** An amount that is charged to a card: 5 to 1,000 dollars in whole cents (no processor charges a fraction of one). */
const ChargedMicros = RequestMicros({
  minimum: 5_000_000,
  maximum: 1_000_000_000,
  multipleOf: 10_000,
  description: "micro-USD charged to the card: 5,000,000 to 1,000,000,000 (5 to 1,000 US dollars), whole cents " +
    "(a multiple of 10,000), since a payment processor cannot charge a fraction of a cent"
})

/** The auto-recharge threshold: compared with the balance, never charged, so any whole micro-USD amount. */
const ThresholdMicros = RequestMicros({
  minimum: 0,
  maximum: 1_000_000_000,
  description: "micro-USD: recharge when the balance falls below this; 0 to 1,000,000,000, any whole number (it " +
    "is never charged)"
})

/** Auto-recharge settings. */
export const AutoRechargeSettings = Schema.Struct({
  enabled: Schema.Boolean,
  threshold_micros: Micros,
  amount_micros: Micros,
  payment_method: Schema.NullOr(Schema.Struct({
    id: Schema.String,
    brand: Schema.NullOr(Schema.String),
    last4: Schema.NullOr(Schema.String)
  })),
  last_failure: Schema.NullOr(Schema.Struct({
    reason: Schema.String,
    failed_at: Timestamp,
    retry_at: Schema.NullOr(Timestamp).annotate({ description: "when the next recharge may be tried (end of the cool-down)" })
  })).annotate({ description: "the last failed recharge (declined, needing the customer's action, or unreachable)" })
})

/** `GET /v1/billing`. */
export const BillingSummary = Schema.Struct({
  organization_id: Schema.String,
  billing_enabled: Schema.Boolean,
  balance_micros: Micros.annotate({ description: "signed" }),
  reserved_micros: Micros,
  available_micros: Micros,
  auto_recharge: AutoRechargeSettings,
  transactions: Schema.Array(Schema.Struct({
    id: Schema.String.annotate({ description: "txn_ + 32 hex, or txn_usage_YYYYMMDD for a UTC day's usage" }),
    kind: Schema.Literals(["signup_credit", "purchase", "auto_recharge", "grant", "usage", "refund"]),
    amount_micros: Micros.annotate({ description: "signed" }),
    description: Schema.String,
    created_at: Timestamp
  }))
})

/** `POST /v1/billing/checkout` body. */
export const CheckoutRequest = StrictStruct({ amount_micros: ChargedMicros })

/** `POST /v1/billing/checkout`: the hosted page of a purchase. */
export const Checkout = Schema.Struct({
  checkout_id: Schema.String,
  checkout_url: Schema.String,
  amount_micros: Micros,
  expires_at: Timestamp
})

/** `POST /v1/billing/portal`. */
export const Portal = Schema.Struct({ portal_url: Schema.String })

/** `PUT /v1/billing/auto-recharge` body. */
export const AutoRechargeRequest = StrictStruct({
  enabled: Schema.Boolean,
  threshold_micros: ThresholdMicros,
  amount_micros: ChargedMicros
})

/** The billing group. */
export class BillingApi extends HttpApiGroup.make("billing")
  .add(
    HttpApiEndpoint.get("summary", "/v1/billing", { success: BillingSummary, error: PlainRouteErrors })
      .annotate(RequiredScope, "billing_read")
      .annotate(OpenApi.Summary, "Balance, holds, auto-recharge settings and the last 50 transactions")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          responses: {
            200: {
              summary: "sign-up credit, a purchase and a day's usage",
              value: BillingSummaryExample satisfies typeof BillingSummary.Encoded
            }
          }
        })
      )
  )
  .add(
    HttpApiEndpoint.post("checkout", "/v1/billing/checkout", {
      payload: CheckoutRequest,
      success: Checkout,
      error: [...PlainRouteErrors, wire(InvalidAmount), wire(NotConfigured)]
    })
      .annotate(RequiredScope, "billing_write")
      .annotate(OpenApi.Summary, "A hosted checkout for buying 5 to 1,000 dollars of credit")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          request: CheckoutRequestExample satisfies typeof CheckoutRequest.Encoded,
          responses: {
            200: {
              summary: "a checkout for 25 dollars, open for an hour",
              value: CheckoutExample satisfies typeof Checkout.Encoded
            }
          }
        })
      )
  )
  .add(
    HttpApiEndpoint.post("portal", "/v1/billing/portal", {
      success: Portal,
      error: [...PlainRouteErrors, wire(NotConfigured)]
    })
      .annotate(RequiredScope, "billing_write")
      .annotate(OpenApi.Summary, "The payment processor's billing portal (saved cards, receipts)")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          responses: {
            200: {
              summary: "a portal link, valid for an hour",
              value: PortalExample satisfies typeof Portal.Encoded
            }
          }
        })
      )
  )
  .add(
    HttpApiEndpoint.put("autoRecharge", "/v1/billing/auto-recharge", {
      payload: AutoRechargeRequest,
      success: AutoRechargeSettings,
      error: [...PlainRouteErrors, wire(InvalidAmount), wire(PaymentMethodRequired)]
    })
      .annotate(RequiredScope, "billing_write")
      .annotate(OpenApi.Summary, "Top the balance up when it falls below a threshold")
      .annotate(
        OpenApi.Transform,
        operationDocs({
          request: AutoRechargeRequestExample satisfies typeof AutoRechargeRequest.Encoded,
          responses: {
            200: {
              summary: "20 dollars below 2, on the saved card",
              value: AutoRechargeExample satisfies typeof AutoRechargeSettings.Encoded
            }
          }
        })
      )
  )
  .middleware(PlainRequestShape)
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "Prepaid credit: the balance and its transactions, a checkout to buy credit, the payment portal, auto-recharge."
  )
{}
