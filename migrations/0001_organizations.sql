-- Tenancy: every resource of the service belongs to one organization.
CREATE TABLE organizations (
  id text PRIMARY KEY,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  created_at timestamptz NOT NULL DEFAULT now()
);
