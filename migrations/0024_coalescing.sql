-- Coalesced samples counted once (CONTRACT.md §2, "Coalescing"): what the rule needs stored.
-- The rule itself is in migrations/repeatable/24_coalescing.sql.

-- True for a sample of rule total that is a coalescing (it covers two or more samples of its
-- own source that add up to its value): it counts in no total and no sample count.
ALTER TABLE health_store.samples ADD COLUMN coalesced boolean NOT NULL DEFAULT false;

-- Which samples of one person, type and source lie inside a span: a range of start_at, the
-- end and value read from the index itself.
CREATE INDEX samples_person_type_source_start ON health_store.samples (person, type, source, start_at)
  INCLUDE (end_at, value, uuid);
-- The few samples longer than an hour, so a sample that may cover a new one but started long
-- before it is found without reading everything in between. The interval must be the one the
-- coalescing functions use (repeatable/24_coalescing.sql).
CREATE INDEX samples_person_long_spans ON health_store.samples (person, type, source, start_at)
  INCLUDE (end_at) WHERE end_at - start_at > interval '1 hour';

-- Every sample of rule total that covers two or more samples of its own source: how many and
-- what they add up to, and whether it still counts (it does when they do not add up to its
-- value). Copies of the sample's key and span, so the samples that may be touched by a batch
-- are found by index.
CREATE TABLE health_store.coverings (
  person       text NOT NULL,
  uuid         uuid NOT NULL,
  type         text NOT NULL,
  source       text NOT NULL,
  start_at     timestamptz NOT NULL,
  end_at       timestamptz NOT NULL,
  parts        integer NOT NULL CHECK (parts >= 2),
  parts_total  numeric,
  counted      boolean NOT NULL,
  PRIMARY KEY (person, uuid)
);
CREATE INDEX coverings_person_type_source_start ON health_store.coverings (person, type, source, start_at);

COMMENT ON TABLE health_store.coverings IS
  'Samples of rule total covering two or more samples of their own source, with the parts'' count and exact sum and whether the sample still counts; health.coalesced_samples reads it.';

-- Per person, type and source, the longest sample over an hour long: how far before a batch
-- a sample that may cover it can start.
CREATE TABLE health_store.long_spans (
  person   text NOT NULL,
  type     text NOT NULL,
  source   text NOT NULL,
  longest  interval NOT NULL,
  PRIMARY KEY (person, type, source)
);

COMMENT ON TABLE health_store.long_spans IS
  'The longest sample over an hour of each person, type and source (never shrinks): bounds the search for samples covering a new one.';

-- Work a versioned file leaves for the current definitions to finish, done by
-- health_store.after_migrate() at the end of the same migration run.
CREATE TABLE health_store.migration_tasks (
  task    text NOT NULL CHECK (task IN ('rebuild_rollups')),
  person  text NOT NULL,
  PRIMARY KEY (task, person)
);

COMMENT ON TABLE health_store.migration_tasks IS
  'Work queued by a versioned migration for health_store.after_migrate(), run at the end of the same migration transaction.';

-- Samples held before this migration: their coverings and rollups are made again under the
-- rule.
INSERT INTO health_store.migration_tasks (task, person)
SELECT 'rebuild_rollups', p.person FROM health_store.persons p
WHERE EXISTS (SELECT 1 FROM health_store.samples s WHERE s.person = p.person);
