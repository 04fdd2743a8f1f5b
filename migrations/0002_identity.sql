-- Identity: members of an organization with their role, and API keys with frozen scopes.
ALTER TABLE organizations ADD COLUMN billing_enabled boolean NOT NULL DEFAULT false;

CREATE TABLE members (
  organization_id text NOT NULL REFERENCES organizations (id),
  user_id text NOT NULL CHECK (length(user_id) BETWEEN 1 AND 128),
  email text NOT NULL,
  email_verified boolean NOT NULL DEFAULT false,
  role text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, user_id)
);

-- Secrets are never stored: only their SHA-256 (unique) and a short display prefix.
CREATE TABLE api_keys (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  name text NOT NULL,
  principal_type text NOT NULL CHECK (principal_type IN ('user', 'service_account')),
  principal_id text NOT NULL,
  scopes text[] NOT NULL,
  secret_sha256 bytea NOT NULL,
  secret_prefix text NOT NULL,
  state text NOT NULL CHECK (state IN ('active', 'revoked')),
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz,
  CHECK ((state = 'revoked') = (revoked_at IS NOT NULL))
);

CREATE UNIQUE INDEX api_keys_secret_sha256 ON api_keys (secret_sha256);
CREATE INDEX api_keys_organization_newest ON api_keys (organization_id, created_at DESC, id DESC);
