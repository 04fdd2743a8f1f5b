-- Every foreign key between two organization-keyed tables includes the organization (docs/scaling.md): a row and
-- the row it references always belong to the same organization, which the database now checks, and a distributed
-- PostgreSQL sharding every such table by organization (Citus) keeps both on one node, where its foreign keys must
-- include the distribution column. The referenced tables get a unique key with the organization first; their
-- primary keys stay as they are (lookups by id alone keep their index).

ALTER TABLE runs ADD CONSTRAINT runs_organization_run UNIQUE (organization_id, id);
ALTER TABLE api_keys ADD CONSTRAINT api_keys_organization_key UNIQUE (organization_id, id);

ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_run_id_fkey,
  ADD CONSTRAINT ledger_entries_run_fkey FOREIGN KEY (organization_id, run_id) REFERENCES runs (organization_id, id);

ALTER TABLE router_selections DROP CONSTRAINT router_selections_run_id_fkey,
  ADD CONSTRAINT router_selections_run_fkey FOREIGN KEY (organization_id, run_id) REFERENCES runs (organization_id, id);

ALTER TABLE key_accounts DROP CONSTRAINT key_accounts_key_id_fkey,
  ADD CONSTRAINT key_accounts_key_fkey FOREIGN KEY (organization_id, key_id) REFERENCES api_keys (organization_id, id);
