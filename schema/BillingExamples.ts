/**
 * Examples of the billing routes for the OpenAPI document: an organization with billing on that took its sign-up
 * credit, bought 25 dollars through the local processor's checkout and ran one decision run. Plain data that imports
 * nothing: BillingApi.ts checks each against its wire schema where it applies it (`satisfies` the schema's encoded
 * type), and test/openapi/OpenApiDocument.test.ts validates each against the emitted document.
 */

const organization_id = "org_12e069dac0efdfa8003594da129ec6ae"
const checkout_id = "chk_e9423188b5b16e3d32556d7c0651a434"

/** `POST /v1/billing/checkout` body: 25 dollars. */
export const CheckoutRequestExample = { amount_micros: 25_000_000 } as const

/** The checkout it opens (the local processor's page, open for an hour). */
export const CheckoutExample = {
  checkout_id,
  checkout_url: `https://arbiter.example.com/billing/local/checkout/${checkout_id}` +
    "?token=CCc3DkX84TH3NpMXg3rq1wZk5gcIVLZx8cNc2tpaQVY",
  amount_micros: 25_000_000,
  expires_at: "2026-11-24T06:44:33Z"
} as const

/** `POST /v1/billing/portal`. */
export const PortalExample = {
  portal_url: "https://arbiter.example.com/billing/local/portal/b3JnXzEyZTA2OWRhYzBlZmRmYTgwMDM1OTRkYTEyOWVjNmFl." +
    "1795502673.Y4pJCqRuss2dhaVvcmraVRazCb3yJYTFOYHNuFtkMp4"
} as const

/** `PUT /v1/billing/auto-recharge` body: recharge 20 dollars when the balance falls below 2. */
export const AutoRechargeRequestExample = {
  enabled: true,
  threshold_micros: 2_000_000,
  amount_micros: 20_000_000
} as const

/** The settings it stores, with the card a checkout saved. */
export const AutoRechargeExample = {
  ...AutoRechargeRequestExample,
  payment_method: { id: "lpm_3b9e1f0c7a2d4e6b8c5f1a09", brand: "Test card", last4: "4242" },
  last_failure: null
} as const

/** `GET /v1/billing`. */
export const BillingSummaryExample = {
  organization_id,
  billing_enabled: true,
  balance_micros: 29_999_986,
  reserved_micros: 0,
  available_micros: 29_999_986,
  auto_recharge: AutoRechargeExample,
  transactions: [
    {
      id: "txn_usage_20261124",
      kind: "usage",
      amount_micros: -14,
      description: "Decision model usage on 2026-11-24 (UTC)",
      created_at: "2026-11-24T05:50:12Z"
    },
    {
      id: "txn_5c1d7e0b2a9f4c38b6e1d0a7f3c9b245",
      kind: "purchase",
      amount_micros: 25_000_000,
      description: `Credit purchase (${checkout_id})`,
      created_at: "2026-11-24T05:47:40Z"
    },
    {
      id: "txn_0e8b3f6a1c7d4e25a9b0c4d1e6f7a832",
      kind: "signup_credit",
      amount_micros: 5_000_000,
      description: "Sign-up credit",
      created_at: "2026-11-24T05:40:06Z"
    }
  ]
} as const
