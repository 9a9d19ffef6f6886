-- From here on, functions and views are defined in migrations/repeatable/ (one file per
-- concern, holding the current definition, re-applied whenever it changes); versioned files
-- like this one only create or move tables and data, and drop what a repeatable file no
-- longer defines. This file makes room for the first application of those files.

-- Every person the warehouse has heard of, and the row a writer locks to serialize that
-- person's writes (health_store.lock_person). A row lock rather than an advisory lock: no
-- reader login may lock a row of health_store, while anyone could guess an advisory key.
CREATE TABLE health_store.persons (
  person        text PRIMARY KEY,
  first_seen_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

COMMENT ON TABLE health_store.persons IS
  'Every person with data, settings or a credential; the row each writer of that person locks (health_store.lock_person), and the list health_store.zone_today computes today for.';

INSERT INTO health_store.persons (person)
SELECT person FROM health_store.samples
UNION SELECT person FROM health_store.deliveries
UNION SELECT person FROM health_store.tokens
UNION SELECT person FROM health_store.settings
UNION SELECT person FROM health_store.source_priorities
UNION SELECT person FROM health_store.rollup_day
UNION SELECT person FROM health_store.ingested_files;

-- A sample's day is now one function of its two timestamps' text (repeatable/10_rules.sql),
-- shared by store_batch and set_time_zone.
DROP FUNCTION health_store.sample_day(jsonb, text, text);

-- calc_source now yields rollup_source rows as they are (rank included), so its column list
-- changes; nothing depends on it.
DROP VIEW health_store.calc_source;
