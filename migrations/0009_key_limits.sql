-- Per-key limits and usage (decisions.md, "Extensions beyond the contract"). A run and each of its model calls
-- remember the API key that asked for them (null for a console session), so usage can be grouped and filtered by
-- key, and a key's limits are checked at admission exactly like the organization's quota (src/ledger/KeyAccounts.ts).

ALTER TABLE runs ADD COLUMN key_id text;
ALTER TABLE ledger_entries ADD COLUMN key_id text;
UPDATE ledger_entries l SET key_id = r.key_id FROM runs r WHERE r.id = l.run_id AND r.key_id IS NOT NULL;

-- What a key holds: its runs still holding (few: only runs in flight), read under the key's lock at admission.
CREATE INDEX runs_held_key ON runs (key_id) INCLUDE (hold_micros, hold_tokens) WHERE held AND key_id IS NOT NULL;
-- A key's usage over a window (group_by=key) and its ledger (key_id filter), newest first like the unfiltered ledger.
CREATE INDEX runs_key_usage ON runs (organization_id, key_id, created_at)
  INCLUDE (state, input_tokens, output_tokens, cost_micros) WHERE key_id IS NOT NULL;
CREATE INDEX ledger_entries_key_newest ON ledger_entries (organization_id, key_id, created_at DESC, id DESC)
  WHERE key_id IS NOT NULL;

-- A key's limits and the settled part of its usage for its current period (a UTC day or month, or all time). Each
-- limit is null when unset. Holds are not stored here: they are read from the key's runs still holding. The token
-- bucket of `runs_per_minute` holds `bucket_tokens` (fractional) as of `bucket_at`, refilled at that many per minute.
CREATE TABLE key_accounts (
  key_id text PRIMARY KEY REFERENCES api_keys (id),
  organization_id text NOT NULL REFERENCES organizations (id),
  spend_limit_micros bigint CHECK (spend_limit_micros >= 0),
  token_limit bigint CHECK (token_limit >= 0),
  runs_per_minute integer CHECK (runs_per_minute >= 1),
  period text NOT NULL DEFAULT 'month' CHECK (period IN ('day', 'month', 'total')),
  period_start timestamptz NOT NULL,
  spend_settled_micros bigint NOT NULL DEFAULT 0 CHECK (spend_settled_micros >= 0),
  tokens_settled bigint NOT NULL DEFAULT 0 CHECK (tokens_settled >= 0),
  bucket_tokens double precision,
  bucket_at timestamptz
);

INSERT INTO key_accounts (key_id, organization_id, period_start)
SELECT id, organization_id, date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' FROM api_keys
ON CONFLICT DO NOTHING;
