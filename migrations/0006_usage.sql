-- Indexes of the usage routes (src/usage/UsageRepo.ts), so a window's rollup and daily series read only the
-- organization's runs of that window, from the index alone, however many runs it has in other windows.
--
-- The rollup and the daily series aggregate every run created in the window: this index carries the columns they
-- sum, so PostgreSQL answers them with an index-only scan instead of visiting each run's (wide) heap row. Read
-- backwards it is also the run list's order (newest first, ties by id), so one index serves both and every run
-- write maintains one index fewer. Settlement
-- already changes `held`, a column of runs_held_deadline's predicate, so its updates were never HOT: the included
-- columns add no new write amplification.
--
-- On a large existing database, build these first without blocking writes (CREATE INDEX CONCURRENTLY with the same
-- definitions); IF NOT EXISTS then skips them here.
CREATE INDEX IF NOT EXISTS runs_usage ON runs (organization_id, created_at, id)
  INCLUDE (state, held, hold_micros, input_tokens, output_tokens, cost_micros);

-- Runs not yet settled, for the rollup's unsettled spend (the cost of calls already answered for them): a small
-- index, since a run leaves it when it settles (only runs that never reached the model stay pending).
CREATE INDEX IF NOT EXISTS runs_pending ON runs (organization_id, created_at) WHERE state = 'pending';
