-- A ledger entry's organization is its run's: the entry references its run by (organization_id, run_id) (migration
-- 0010), and the run references its organization, so the entry's own reference to `organizations` checks nothing
-- the other two do not. It is dropped: every stored call paid for that check, a query of the organization's row
-- that share-locks it, while each admission batch share-locks the same row for its runs (two transactions holding a
-- row's share lock at once make PostgreSQL record them as a multixact).
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_organization_id_fkey;
