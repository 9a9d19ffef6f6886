-- One write core (docs/architecture.md, "Schema layout"): what the write path passes around
-- gets types of its own, the level-1 aggregates become one composite column, and the rollups a
-- grouping writer defers are flushed by an explicit call before COMMIT instead of a deferred
-- constraint trigger. Every definition is written so that it also works sharded by person
-- (docs/scaling.md): SQL functions are pure expressions (no table read, no table row type in a
-- signature), table-reading functions are called only at the top of a statement.
--
-- The tables hold the same data as before; level 1 is rebuilt from the samples at the end of
-- this migration (health_store.after_migrate), in the same transaction.

-- A rollup key and a written span, passed as arrays of one type instead of parallel arrays.
CREATE TYPE health_store.rollup_key AS (day date, type text, source text);
CREATE TYPE health_store.span AS (type text, source text, start_at timestamptz, end_at timestamptz);

-- What storing a Stridee push did: a value Swift decodes exhaustively.
CREATE TYPE health_store.push_outcome AS ENUM ('stored', 'unchanged', 'not_connected');

-- A workout's stream (samples in time order) and its GPS route (parallel arrays in time order,
-- NULL elements where a point lacks an optional field), as the writers take them.
CREATE TYPE health_store.workout_stream AS (stream text, t timestamptz[], v double precision[]);
CREATE TYPE health_store.workout_route AS (
  t timestamptz[], lat double precision[], lon double precision[], altitude double precision[],
  speed double precision[], course double precision[], horizontal double precision[], vertical double precision[]
);

-- Rules as data: the stream kinds a workout may carry and their unit. A new kind is a row here
-- and an entry in the decoder's list of streams.
CREATE TABLE health_store.stream_kinds (
  stream  text PRIMARY KEY,
  unit    text NOT NULL
);
INSERT INTO health_store.stream_kinds (stream, unit) VALUES
  ('heart_rate', 'count/min'), ('running_power', 'W'), ('cycling_power', 'W'), ('cycling_cadence', 'rpm');
COMMENT ON TABLE health_store.stream_kinds IS
  'The streams a healthkit.v1 workout may carry (health.workout_streams.stream) and the unit of their values.';
ANALYZE health_store.stream_kinds;
ALTER TABLE health_store.workout_streams DROP CONSTRAINT IF EXISTS workout_streams_stream_check,
  ADD CONSTRAINT workout_streams_stream_kind FOREIGN KEY (stream) REFERENCES health_store.stream_kinds (stream);

-- A sample that covers two or more samples of its own key (the coalescing rule), with what it covers.
CREATE TYPE health_store.covering AS (
  uuid uuid, type text, source text, start_at timestamptz, end_at timestamptz,
  value double precision, parts bigint, parts_total numeric
);

-- A catalog type's rule and what its rollup rows carry (health_store.type_rules), and a stored
-- level-1 key's rank and aggregates: what the rollup refresh reads into variables.
CREATE TYPE health_store.type_rule AS (type text, rule text, per_source_winner boolean, metric text, unit text);

-- Rollup level 1's aggregates of one key's samples (health_store.source_rollup makes them,
-- health_store.merge_source_rollups adds two): one composite column of rollup_source, so a
-- stored row and a fresh one merge, compare and move as one value.
CREATE TYPE health_store.source_aggregates AS (
  kind             text,
  samples          bigint,
  n_values         bigint,
  sum_value        numeric,
  min_value        double precision,
  max_value        double precision,
  first_start_at   timestamptz,
  last_start_at    timestamptz,
  latest_start_at  timestamptz,
  latest_end_at    timestamptz,
  latest_value     double precision,
  latest_uuid      uuid,
  asleep_s         numeric,
  in_bed_s         numeric,
  unspecified_s    numeric,
  awake_s          numeric,
  core_s           numeric,
  deep_s           numeric,
  rem_s            numeric,
  unknown_s        numeric,
  workouts         bigint,
  duration_s       numeric,
  distance_m       numeric,
  energy_kcal      numeric
);

-- Definitions over the old layout go first; the repeatable files define them again.
DROP TRIGGER IF EXISTS deferred_rollups_at_commit ON health_store.deferred_rollups;
DROP FUNCTION IF EXISTS health_store.flush_deferred_rollups();
DROP VIEW IF EXISTS health.daily_source_totals;
DROP VIEW IF EXISTS health_store.calc_day_type;
DROP VIEW IF EXISTS health_store.calc_source;
DROP FUNCTION IF EXISTS health_store.merge_source_rollups(health_store.rollup_source, health_store.rollup_source);
DROP FUNCTION IF EXISTS health_store.source_rollup(text, text, date, text, health_store.sample_facts[]);
DROP FUNCTION IF EXISTS health_store.sample_facts_of(health_store.samples);
DROP FUNCTION IF EXISTS health_store.calc_coverings(text);
DROP FUNCTION IF EXISTS health_store.coverings_near(text, text[], text[], timestamptz[], timestamptz[]);
DROP FUNCTION IF EXISTS health_store.set_connection(text, boolean, timestamptz);
DROP FUNCTION IF EXISTS health_store.store_wellness(text, boolean, text[], timestamptz[], text[], timestamptz[], bigint[], boolean[], text[], json[], timestamptz);
DROP FUNCTION IF EXISTS health_store.store_activity_summaries(text, jsonb, timestamptz);
DROP FUNCTION IF EXISTS health_store.store_batch(text, text, text, text, jsonb, jsonb, jsonb, bytea, timestamptz);

-- The sleep stages of the reference are one pure function now (health_store.sleep_stage), which
-- a level-1 aggregate can call on any node.
DROP TABLE IF EXISTS health_store.sleep_stages;

-- Level 1: the aggregates as one column. Its rows are rebuilt below, so they go now.
INSERT INTO health_store.migration_tasks (task, person)
SELECT 'rebuild_rollups', p.person FROM health_store.persons p
ON CONFLICT DO NOTHING;
TRUNCATE health_store.rollup_source;
ALTER TABLE health_store.rollup_source
  DROP COLUMN kind, DROP COLUMN samples, DROP COLUMN n_values, DROP COLUMN sum_value,
  DROP COLUMN min_value, DROP COLUMN max_value, DROP COLUMN first_start_at, DROP COLUMN last_start_at,
  DROP COLUMN latest_start_at, DROP COLUMN latest_end_at, DROP COLUMN latest_value, DROP COLUMN latest_uuid,
  DROP COLUMN in_bed_s, DROP COLUMN unspecified_s, DROP COLUMN awake_s, DROP COLUMN core_s,
  DROP COLUMN deep_s, DROP COLUMN rem_s, DROP COLUMN unknown_s, DROP COLUMN workouts,
  DROP COLUMN duration_s, DROP COLUMN distance_m, DROP COLUMN energy_kcal, DROP COLUMN asleep_s,
  ADD COLUMN agg health_store.source_aggregates NOT NULL;

CREATE TYPE health_store.stored_level1 AS (day date, type text, source text, rank integer, agg health_store.source_aggregates);

COMMENT ON COLUMN health_store.rollup_source.agg IS
  'The aggregates of the key''s samples (health_store.source_rollup): counts, exact sums, extremes, the latest sample, seconds per sleep stage, workout sums.';

-- Each person's last accepted batch, noted by store_batch: health.freshness reads it instead of
-- searching the deliveries.
ALTER TABLE health_store.persons ADD COLUMN last_delivery_id bigint;
UPDATE health_store.persons p SET last_delivery_id = (
  SELECT d.delivery_id FROM health_store.deliveries d WHERE d.person = p.person
  ORDER BY d.received_at DESC, d.delivery_id DESC LIMIT 1);
COMMENT ON COLUMN health_store.persons.last_delivery_id IS
  'The person''s latest accepted batch (health_store.deliveries.delivery_id), set by store_batch; NULL before any.';

-- Rollups a grouping writer defers, keyed by person like every other table (the flush is
-- called per person, health_store.flush_rollups). Rows live only inside the transaction that
-- wrote them.
DROP TABLE health_store.deferred_rollups;
CREATE TABLE health_store.deferred_rollups (
  person   text NOT NULL,
  xact     xid8 NOT NULL,
  keys     health_store.rollup_key[],
  added    health_store.added_samples[]
);
CREATE INDEX deferred_rollups_person_xact ON health_store.deferred_rollups (person, xact);
ALTER TABLE health_store.deferred_rollups ALTER COLUMN keys SET STORAGE EXTERNAL,
  ALTER COLUMN added SET STORAGE EXTERNAL;

COMMENT ON TABLE health_store.deferred_rollups IS
  'Rollup refreshes queued by a transaction that stores several batches of a person (health_warehouse.defer_rollups on), done once by health_store.flush_rollups before its COMMIT; empty outside such a transaction.';
