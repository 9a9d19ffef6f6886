-- What the Health app's export writes alike on many records, held once per person: each record
-- carries its source's device description, its version and the unit written (docs/apple-export.md,
-- "Storage") — about 150 of the 250 bytes its healthExport block took in every row, for a few
-- dozen distinct values in a year's export. The export's mapping (ExportMapper, Swift) sends them
-- apart from the block (the record's exportShared key) with the number they are held under
-- (exportContext: the first 8 bytes of their SHA-256, so that no record needs a lookup to be
-- stored); the write path stores each distinct set here once and a sample row names it by that
-- number (sample_rows.context); health_store.samples puts them back into the payload
-- (health_store.full_payload), so every reader sees the record as exported.

CREATE TABLE health_store.export_contexts (
  person  text NOT NULL,
  context bigint NOT NULL,
  members jsonb NOT NULL,
  PRIMARY KEY (person, context)
);

COMMENT ON TABLE health_store.export_contexts IS
  'One row per person and distinct set of the healthExport members many imported records share (device, sourceVersion, unit), under the number health_store.sample_rows.context stores for them (the first 8 bytes of their SHA-256 as the export''s mapping wrote them).';
COMMENT ON COLUMN health_store.export_contexts.members IS
  'The healthExport members the records naming this context had, as exported.';

-- And each record's creation date, the one member every record has and none shares, as seconds
-- after its end (4 bytes where its text took ~45 in the payload): the mapping sends the number
-- (exportCreated) only when the date written back from it in the end's offset is the text.
ALTER TABLE health_store.sample_rows ADD COLUMN context bigint, ADD COLUMN created_s integer;

COMMENT ON COLUMN health_store.sample_rows.context IS
  'The health_store.export_contexts row holding the healthExport members this imported record shares with others; NULL for every other sample.';
COMMENT ON COLUMN health_store.sample_rows.created_s IS
  'An imported record''s creation date (healthExport.creationDate) as seconds after end_at, written back in the end''s offset (health_store.export_stamp_text); NULL for every other sample, and where the payload keeps the text.';

-- What the write path carries per incoming sample: the number, the members and the seconds.
ALTER TYPE health_store.incoming_sample ADD ATTRIBUTE context bigint, ADD ATTRIBUTE context_members jsonb,
  ADD ATTRIBUTE created_s integer;
