-- What the Health app's export writes alike on many records, held once per person: each record
-- carries its source's device description, its version and the unit written (docs/apple-export.md,
-- "Storage") — about 150 of the 250 bytes its healthExport block took in every row, for a few
-- dozen distinct values in a year's export. The write path stores them here once and a sample
-- row names them by number (sample_rows.context); health_store.samples puts them back into the
-- payload (health_store.full_payload), so every reader sees the record as exported.

CREATE TABLE health_store.export_contexts (
  person  text NOT NULL,
  context integer NOT NULL,
  members jsonb NOT NULL,
  PRIMARY KEY (person, context),
  UNIQUE (person, members)
);

COMMENT ON TABLE health_store.export_contexts IS
  'One row per person and distinct set of the healthExport members many imported records share (device, sourceVersion, unit): the number health_store.sample_rows.context stores for them.';
COMMENT ON COLUMN health_store.export_contexts.members IS
  'The healthExport members the records naming this context had, as exported (health_store.export_context).';

-- And each record's creation date, the one member every record has and none shares, as seconds
-- after its end (4 bytes where its text took ~45 in the payload), when that gives the text back.
ALTER TABLE health_store.sample_rows ADD COLUMN context integer, ADD COLUMN created_s integer;

COMMENT ON COLUMN health_store.sample_rows.context IS
  'The health_store.export_contexts row holding the healthExport members this imported record shares with others; NULL for every other sample.';
COMMENT ON COLUMN health_store.sample_rows.created_s IS
  'An imported record''s creation date (healthExport.creationDate) as seconds after end_at, written back in the end''s offset (health_store.export_created_s); NULL for every other sample, and where the payload keeps the text.';

-- What the write path carries per incoming sample: those members, taken out of its payload, and
-- the creation date's seconds.
ALTER TYPE health_store.incoming_sample ADD ATTRIBUTE context jsonb, ADD ATTRIBUTE created_s integer;

-- Whether a person holds imported records at all (health_store.may_hold_twins, before every
-- pushed batch) is the one question asked of imported records by origin alone: an index of the
-- person only answers it, its equal keys deduplicated into a few bytes a record, where the
-- index by start it replaces took 33 (the twins themselves are probed by series and start,
-- sample_rows_series_start).
DROP INDEX health_store.sample_rows_export_twins;
CREATE INDEX sample_rows_imported ON health_store.sample_rows (person) WHERE origin = 'export';
