-- Health Auto Export (docs/health-auto-export.md): what its pushes and files need stored. Its
-- samples go through the one write path (health_store.store_samples, origin hae); the
-- functions and views are in migrations/repeatable/ (30_store_batch.sql, 37_hae.sql).

-- A summarized heart rate point is a bucket's Min, Avg and Max: the sample's value is Avg, and
-- these hold its extremes, so a day's minimum and maximum are the readings' own (rollup level 1
-- takes min(coalesce(value_min, value)) and max(coalesce(value_max, value))). NULL for every
-- other sample: they cost nothing there.
ALTER TABLE health_store.sample_rows
  ADD COLUMN value_min double precision,
  ADD COLUMN value_max double precision;

COMMENT ON COLUMN health_store.sample_rows.value_min IS
  'The lowest reading a summarized sample stands for (Health Auto Export''s heart rate Min), in the sample''s unit; NULL for every other sample.';
COMMENT ON COLUMN health_store.sample_rows.value_max IS
  'The highest reading a summarized sample stands for (Health Auto Export''s heart rate Max); NULL for every other sample.';

-- The sample object's keys the write path reads, as the text sent: its Min and Max too (a key of
-- that name sent by another way in is kept in its payload and read nowhere).
ALTER TYPE health_store.sent_fields ADD ATTRIBUTE "Min" text, ADD ATTRIBUTE "Max" text;

-- What the write path carries per incoming sample: the extremes, and the held samples of a
-- way in that wins which the sample is a twin of (it is then not stored: matched); `twins`
-- stays the held samples of a way in it wins over, which it replaces.
ALTER TYPE health_store.incoming_sample
  ADD ATTRIBUTE value_min double precision,
  ADD ATTRIBUTE value_max double precision,
  ADD ATTRIBUTE matches uuid[];

-- What rollup level 1 reads of a sample: the extremes too.
ALTER TYPE health_store.sample_facts
  ADD ATTRIBUTE value_min double precision,
  ADD ATTRIBUTE value_max double precision;

-- Health Auto Export's points in time (not its summarized buckets, which are never a twin):
-- a pushed or imported sample looks for one of the same type starting within a second.
-- Partial, so people who never used the app pay nothing, and one probe tells whether a person
-- holds any.
CREATE INDEX sample_rows_hae_points ON health_store.sample_rows (person, start_at)
  WHERE origin = 'hae' AND NOT coalesce(payload ? 'haeBucket', false);

-- The other arrays of a Health Auto Export body (symptoms, ecg, heartRateNotifications,
-- stateOfMind, cycleTracking, medications, and any the app adds), one row per item, kept as
-- sent; the same item sent again is one row (its hash of the item's jsonb text is the key).
CREATE TABLE health_store.hae_records (
  person       text NOT NULL,
  kind         text NOT NULL,
  item_sha256  bytea NOT NULL,
  received_at  timestamptz NOT NULL,
  item         jsonb NOT NULL,
  PRIMARY KEY (person, kind, item_sha256)
);

COMMENT ON TABLE health_store.hae_records IS
  'Items of Health Auto Export''s other arrays (symptoms, ecg, heartRateNotifications, stateOfMind, cycleTracking, medications, …) as sent, one row per person, array and item; health.hae_records reads it.';
