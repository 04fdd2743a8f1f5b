-- Billing: checkouts (credit purchases, credited exactly once), the processor's webhook events already handled,
-- auto-recharge settings with the saved payment method and the state of the current recharge, and the e-mail
-- addresses that received the one-time sign-up credit.

CREATE TABLE billing_settings (
  organization_id text PRIMARY KEY REFERENCES organizations (id),
  processor_customer_id text,
  payment_method_id text,
  payment_method_brand text,
  payment_method_last4 text,
  auto_recharge_enabled boolean NOT NULL DEFAULT false,
  auto_recharge_threshold_micros bigint NOT NULL DEFAULT 0 CHECK (auto_recharge_threshold_micros >= 0),
  auto_recharge_amount_micros bigint NOT NULL DEFAULT 5000000 CHECK (auto_recharge_amount_micros > 0),
  -- The recharge in progress (one at a time per organization); its id is the processor's idempotency key.
  -- A recharge that leaves the balance under the threshold disarms auto-recharge until credit arrives by other
  -- means, so one dip is never charged twice.
  recharge_armed boolean NOT NULL DEFAULT true,
  recharge_id text,
  recharge_started_at timestamptz,
  -- The last failed recharge, shown in GET /v1/billing, and the cool-down before the next attempt.
  recharge_failed_at timestamptz,
  recharge_failure_reason text,
  recharge_retry_after timestamptz
);

CREATE TABLE checkouts (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  amount_micros bigint NOT NULL CHECK (amount_micros > 0),
  processor text NOT NULL,
  processor_ref text,
  url text,
  state text NOT NULL CHECK (state IN ('open', 'paid')),
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  paid_at timestamptz
);
CREATE INDEX checkouts_organization ON checkouts (organization_id, created_at DESC);

CREATE TABLE processor_events (
  id text PRIMARY KEY,
  kind text NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE signup_credits (
  email_normalized text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  granted_at timestamptz NOT NULL DEFAULT now()
);
