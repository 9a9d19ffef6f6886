-- Rollup work a writer grouping several batches into one transaction defers to its commit
-- (backlog ingest): refresh_batch_rollups queues its arguments here while the setting
-- health_warehouse.defer_rollups is on, and a deferred trigger does the work once, for all
-- of them, just before the transaction commits (repeatable/25_rollup_upkeep.sql). Rows live
-- only inside the transaction that wrote them.
CREATE TABLE health_store.deferred_rollups (
  xact     xid8 NOT NULL DEFAULT pg_current_xact_id(),
  person   text NOT NULL,
  days     date[],
  types    text[],
  sources  text[],
  added    health_store.added_samples[]
);
CREATE INDEX deferred_rollups_xact ON health_store.deferred_rollups (xact);
-- Rows hold a batch's added samples (tens of kB) for a moment: never worth compressing.
ALTER TABLE health_store.deferred_rollups ALTER COLUMN added SET STORAGE EXTERNAL,
  ALTER COLUMN days SET STORAGE EXTERNAL, ALTER COLUMN types SET STORAGE EXTERNAL,
  ALTER COLUMN sources SET STORAGE EXTERNAL;

COMMENT ON TABLE health_store.deferred_rollups IS
  'Rollup refreshes queued by a transaction that stores several batches (health_warehouse.defer_rollups on), done once at its commit; empty outside such a transaction.';
