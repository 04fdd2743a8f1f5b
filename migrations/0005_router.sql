-- Router selections: the outcome of each POST /v1/router/select, stored once its classification run has settled,
-- so the same idempotency key and body replay it exactly (with replayed true) and charge nothing. One row per
-- classification run (origin 'router'); outcome 'selected' holds the response, 'no_eligible_model' the refusal's
-- message (filters too tight for the classified task).
CREATE TABLE router_selections (
  run_id uuid PRIMARY KEY REFERENCES runs (id),
  organization_id text NOT NULL REFERENCES organizations (id),
  outcome text NOT NULL CHECK (outcome IN ('selected', 'no_eligible_model')),
  body json NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
