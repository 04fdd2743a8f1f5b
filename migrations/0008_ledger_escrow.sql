-- The ledger moves out of the database's functions into src/ledger/ (TypeScript beside the statements it runs), and
-- admission stops serializing on an organization's account row: each server process (a holder, with a heartbeat)
-- leases slices of an organization's available credit and remaining quota (ledger_leases) and admits runs against
-- them; the sum of the leases and of the holds of runs admitted outside them never exceeds what is available.
-- Holds are read from the runs still holding (their own columns), so the account and period rows no longer carry
-- reserved counters; ledger entries say whether their cost has been billed yet.

DROP FUNCTION IF EXISTS arbiter_admit(timestamptz, bigint, json);
DROP FUNCTION IF EXISTS arbiter_settle(timestamptz, json, json);
DROP FUNCTION IF EXISTS arbiter_hold(text, date, bigint, bigint, bigint);
DROP TYPE IF EXISTS arbiter_admission;

-- A server process while it lives: its leases and the runs it admitted are its own until its heartbeat stops.
CREATE TABLE ledger_holders (
  id text PRIMARY KEY,
  started_at timestamptz NOT NULL DEFAULT now(),
  heartbeat_at timestamptz NOT NULL DEFAULT now()
);

-- A holder's slice of an organization's credit (with billing on) and of its quota for one period (where a limit is
-- set). `*_held` is what runs admitted against the slice hold of it; a revoked lease admits nothing more.
CREATE TABLE ledger_leases (
  id uuid PRIMARY KEY,
  holder text NOT NULL REFERENCES ledger_holders (id),
  organization_id text NOT NULL REFERENCES organizations (id),
  period date NOT NULL,
  billing boolean NOT NULL,
  spend_limited boolean NOT NULL,
  tokens_limited boolean NOT NULL,
  revoked boolean NOT NULL DEFAULT false,
  credit_micros bigint NOT NULL DEFAULT 0,
  credit_held bigint NOT NULL DEFAULT 0,
  spend_micros bigint NOT NULL DEFAULT 0,
  spend_held bigint NOT NULL DEFAULT 0,
  tokens bigint NOT NULL DEFAULT 0,
  tokens_held bigint NOT NULL DEFAULT 0,
  version bigint NOT NULL DEFAULT 0,
  CHECK (credit_held >= 0 AND credit_held <= credit_micros),
  CHECK (spend_held >= 0 AND spend_held <= spend_micros),
  CHECK (tokens_held >= 0 AND tokens_held <= tokens)
);
CREATE UNIQUE INDEX ledger_leases_live ON ledger_leases (holder, organization_id, period) WHERE NOT revoked;
CREATE INDEX ledger_leases_organization ON ledger_leases (organization_id, period);

-- Which holder admitted a run, and the lease it holds against while it holds (null once settled, or when admitted
-- outside any lease).
ALTER TABLE runs ADD COLUMN holder text, ADD COLUMN lease_id uuid;
CREATE INDEX runs_held_organization ON runs (organization_id, period)
  INCLUDE (hold_micros, hold_tokens, hold_credit, lease_id) WHERE held;
CREATE INDEX runs_held_holder ON runs (holder) WHERE held;

-- A call's cost is billed (captured, counted in the quota) once, when its run settles; a call stored while its run
-- was still reading waits unbilled, and counts as unsettled spend.
ALTER TABLE ledger_entries ADD COLUMN billed boolean NOT NULL DEFAULT true;
UPDATE ledger_entries l SET billed = false FROM runs r WHERE r.id = l.run_id AND r.held;
CREATE INDEX ledger_entries_unbilled ON ledger_entries (organization_id) INCLUDE (run_id, cost_micros) WHERE NOT billed;

-- Holds are now read from the runs holding them.
ALTER TABLE credit_accounts DROP COLUMN reserved_micros;
ALTER TABLE quota_periods DROP COLUMN spend_reserved_micros, DROP COLUMN tokens_reserved;
