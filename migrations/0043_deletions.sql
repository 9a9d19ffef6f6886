-- Deletions reconciled from the Health app's export (CONTRACT.md §6): a sample Health no longer
-- holds keeps its row, marked, and counts nowhere; the reconciliations done; the records of the
-- export being reconciled, staged while it is read. The rules are in
-- migrations/repeatable/62_deletions.sql.

-- When a sample was marked deleted, and the ExportDate of the export that did not hold it;
-- both NULL for a sample Health holds. A marked sample counts in no view but health.samples
-- and health.deleted_samples. (The pair's check holds for every row already there, both NULL:
-- NOT VALID spares reading them all.)
ALTER TABLE health_store.samples
  ADD COLUMN deleted_at timestamptz,
  ADD COLUMN deleted_by_export timestamptz,
  ADD CONSTRAINT samples_deleted_pair CHECK ((deleted_at IS NULL) = (deleted_by_export IS NULL)) NOT VALID;
-- The few deleted samples of a person, for health.deleted_samples.
CREATE INDEX samples_person_deleted ON health_store.samples (person, deleted_at) WHERE deleted_at IS NOT NULL;

COMMENT ON COLUMN health_store.samples.deleted_at IS
  'When reconciling an export marked the sample deleted in Health (no record of that export matched it); NULL while Health holds it.';
COMMENT ON COLUMN health_store.samples.deleted_by_export IS
  'ExportDate of the export that did not hold the sample; NULL while Health holds it.';

-- One row per reconciliation of a person: an export older than the last one is refused.
CREATE TABLE health_store.reconciliations (
  person          text NOT NULL,
  export_date     timestamptz NOT NULL,
  reconciled_at   timestamptz NOT NULL,
  path            text NOT NULL,
  deleted         bigint NOT NULL,
  PRIMARY KEY (person, export_date, reconciled_at)
);

COMMENT ON TABLE health_store.reconciliations IS
  'Each import-apple-health --reconcile of a person: the export''s ExportDate, when, which file, how many samples it marked deleted.';

-- The records of an export being reconciled (type, span, reading), staged while it is read and
-- removed when the reconciliation ends. A run is one command.
CREATE TABLE health_store.export_records (
  person          text NOT NULL,
  run             uuid NOT NULL,
  type            text NOT NULL,
  start_at        timestamptz NOT NULL,
  end_at          timestamptz NOT NULL,
  value           double precision,
  payload_value   jsonb
);
CREATE INDEX export_records_twins ON health_store.export_records (person, run, type, start_at);

COMMENT ON TABLE health_store.export_records IS
  'The records of an export being reconciled, staged by import-apple-health --reconcile and removed when it ends: what a held sample is compared with.';

-- A sample a reconciliation marks: its uuid, and the type and day its counts are told by.
CREATE TYPE health_store.marked_sample AS (uuid uuid, type text, day date);
