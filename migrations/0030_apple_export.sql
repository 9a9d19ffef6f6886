-- The Health app's export (CONTRACT.md §5): what `health-warehouse import-apple-health` needs
-- stored. The functions and the view are in migrations/repeatable/33_apple_export.sql and
-- 47_apple_export_views.sql.

-- An import stores its records through store_batch like every other way in: one delivery row
-- per batch, origin export, format xml, the file named. `matched` counts the records that
-- were not stored because a pushed sample equal to them is held (the twins rule).
ALTER TABLE health_store.deliveries
  DROP CONSTRAINT deliveries_origin_check,
  ADD CONSTRAINT deliveries_origin_check CHECK (origin IN ('http', 'file', 'export')),
  DROP CONSTRAINT deliveries_format_check,
  ADD CONSTRAINT deliveries_format_check CHECK (format IN ('json', 'csv', 'xml')),
  ADD COLUMN matched integer NOT NULL DEFAULT 0 CHECK (matched >= 0);

-- Where a person's pushed samples begin (the earliest window of their healthd batches): an
-- imported record older than that has no pushed twin to look for.
CREATE INDEX deliveries_person_origin_window ON health_store.deliveries (person, origin, window_start);

-- The ledger keeps imports too, one row per person and export (archive, folder or
-- export.xml): `ingested_records` is how many of its elements (Record, Workout,
-- ActivitySummary and skipped ones, in document order) are stored, so an interrupted import
-- resumes after its last committed batch; `sha256` is the whole file's, and `ingested_bytes`
-- equals `size_bytes` once the import reached the end.
ALTER TABLE health_store.ingested_files
  DROP CONSTRAINT ingested_files_format_check,
  ADD CONSTRAINT ingested_files_format_check CHECK (format IN ('json', 'jsonl', 'csv', 'apple-export')),
  ADD COLUMN matched bigint NOT NULL DEFAULT 0;

COMMENT ON TABLE health_store.ingested_files IS
  'Backlog files read by `health-warehouse ingest`, and exports read by `import-apple-health` (format apple-export), per person: size, modification time, how far they are stored (bytes, or for an export its elements in document order), the SHA-256 of what is stored (of the whole file for an export), and totals. Lets a re-run skip unchanged files unread and go on where an earlier run ended.';

-- Imported samples, by what decides a twin: a pushed sample looks for an imported one of the
-- same type starting within a second of it. Partial, so people who never imported pay
-- nothing for it, and one probe of it tells whether a person holds imported samples at all.
CREATE INDEX samples_person_export_twins ON health_store.samples (person, type, start_at) WHERE origin = 'export';

-- The Activity rings of each day, from the export's ActivitySummary elements: a later import
-- replaces a day (the export of a day still in progress had partial values).
CREATE TABLE health_store.activity_summaries (
  person                   text NOT NULL,
  day                      date NOT NULL,
  active_energy_kcal       double precision,
  active_energy_goal_kcal  double precision,
  exercise_min             double precision,
  exercise_goal_min        double precision,
  stand_hours              double precision,
  stand_goal_hours         double precision,
  -- The element's attributes as written (units, appleMoveTime, …).
  summary                  jsonb NOT NULL,
  first_received_at        timestamptz NOT NULL,
  last_received_at         timestamptz NOT NULL,
  PRIMARY KEY (person, day)
);

COMMENT ON TABLE health_store.activity_summaries IS
  'The Activity rings of a person''s day from the Health app''s export (ActivitySummary): energy, exercise and stand values with their goals, and the element as written; health.activity_summaries reads it.';

-- store_batch now also returns how many records matched a pushed twin: its result changes,
-- so the old definition goes (repeatable/30_store_batch.sql makes the new one).
DROP FUNCTION health_store.store_batch(text, text, text, text, jsonb, jsonb, jsonb, bytea, timestamptz);
