-- Decision runs, the per-call ledger, prepaid credit and period quotas. Admission and settlement of an
-- organization's runs serialize on its credit_accounts row (SELECT ... FOR UPDATE); every money column is an
-- integer of micro-USD.

-- Prepaid credit: one account per organization. reserved_micros is the sum of the credit holds of runs in flight.
CREATE TABLE credit_accounts (
  organization_id text PRIMARY KEY REFERENCES organizations (id),
  balance_micros bigint NOT NULL DEFAULT 0,
  reserved_micros bigint NOT NULL DEFAULT 0 CHECK (reserved_micros >= 0)
);
INSERT INTO credit_accounts (organization_id) SELECT id FROM organizations;

-- Every change of a balance is one transaction row, so the balance always equals the sum of its transactions. A
-- UTC day's usage accumulates in one row with id txn_usage_YYYYMMDD.
CREATE TABLE credit_transactions (
  organization_id text NOT NULL REFERENCES organizations (id),
  id text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('signup_credit', 'purchase', 'auto_recharge', 'grant', 'usage', 'refund')),
  amount_micros bigint NOT NULL,
  description text NOT NULL,
  external_ref text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id)
);
CREATE UNIQUE INDEX credit_transactions_external_ref ON credit_transactions (external_ref) WHERE external_ref IS NOT NULL;
-- Newest first for GET /v1/billing. Keyed on created_at, which never changes, so the settlements that add to a
-- day's usage row leave every indexed column alone and PostgreSQL updates it in place (a HOT update).
CREATE INDEX credit_transactions_newest ON credit_transactions (organization_id, created_at DESC, id DESC);

-- Period quotas: limits per organization (null: none), and per UTC month the spend and tokens settled and held.
CREATE TABLE quota_limits (
  organization_id text PRIMARY KEY REFERENCES organizations (id),
  period_spend_limit_micros bigint CHECK (period_spend_limit_micros >= 0),
  period_token_limit bigint CHECK (period_token_limit >= 0)
);

CREATE TABLE quota_periods (
  organization_id text NOT NULL REFERENCES organizations (id),
  period date NOT NULL,
  spend_settled_micros bigint NOT NULL DEFAULT 0,
  spend_reserved_micros bigint NOT NULL DEFAULT 0 CHECK (spend_reserved_micros >= 0),
  tokens_settled bigint NOT NULL DEFAULT 0,
  tokens_reserved bigint NOT NULL DEFAULT 0 CHECK (tokens_reserved >= 0),
  PRIMARY KEY (organization_id, period)
);

-- Runs. A run holds its spend ceiling (and its token reservation) against the quota period of its creation, and
-- against credit when billing was on at admission, until it settles or its holds are released (held = false).
CREATE TABLE runs (
  id uuid PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  origin text NOT NULL CHECK (origin IN ('runs', 'router')),
  idempotency_key text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('decision', 'verdict')),
  state text NOT NULL CHECK (state IN ('pending', 'completed', 'failed')),
  input_digest text NOT NULL,
  output_digest text,
  output json,
  error_code text,
  error_message text,
  input_tokens bigint NOT NULL DEFAULT 0,
  output_tokens bigint NOT NULL DEFAULT 0,
  cost_micros bigint NOT NULL DEFAULT 0,
  period date NOT NULL,
  hold_micros bigint NOT NULL,
  hold_tokens bigint NOT NULL,
  hold_credit boolean NOT NULL,
  held boolean NOT NULL,
  deadline_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  settled_at timestamptz
);
-- The run list (newest first) reads runs_usage (migration 0006) backwards.
CREATE UNIQUE INDEX runs_idempotency ON runs (organization_id, origin, idempotency_key);
CREATE INDEX runs_held_deadline ON runs (deadline_at) WHERE held;

-- One entry per model call (retries included). `call_index` numbers a run's calls in the order the run learned of
-- them, so a call recorded while its run is in flight and again at settlement is stored once.
CREATE TABLE ledger_entries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  run_id uuid NOT NULL REFERENCES runs (id),
  call_index integer NOT NULL CHECK (call_index >= 0),
  retry_ordinal integer NOT NULL CHECK (retry_ordinal >= 0),
  provider text NOT NULL,
  model_id text NOT NULL,
  provider_request_id text,
  status text NOT NULL CHECK (status IN ('succeeded', 'failed')),
  input_tokens bigint NOT NULL CHECK (input_tokens >= 0),
  output_tokens bigint NOT NULL CHECK (output_tokens >= 0),
  cost_micros bigint NOT NULL CHECK (cost_micros >= 0),
  created_at timestamptz NOT NULL
);
CREATE INDEX ledger_entries_newest ON ledger_entries (organization_id, created_at DESC, id DESC);
CREATE UNIQUE INDEX ledger_entries_run ON ledger_entries (run_id, call_index);
