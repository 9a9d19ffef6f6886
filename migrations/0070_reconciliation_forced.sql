-- Whether a reconciliation was forced (`import-apple-health --reconcile --force`). The 20 % rule
-- counts what the person's reconciliations marked deleted since the last one that marked nothing
-- or was forced (migrations/repeatable/62_deletions.sql): a forced one is the person saying
-- those deletions are real. Every reconciliation before this version was not forced.
ALTER TABLE health_store.reconciliations ADD COLUMN forced boolean NOT NULL DEFAULT false;

COMMENT ON COLUMN health_store.reconciliations.forced IS
  'True when the reconciliation was forced (--force): the 20 % rule counts marks only from the last reconciliation that marked nothing or was forced.';
