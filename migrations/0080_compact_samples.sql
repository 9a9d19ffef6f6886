-- What a decade costs a person's disk (docs/benchmarks.md, "Storage"). The samples move into a
-- compact table, health_store.sample_rows: a sample's type and source are one integer of the
-- person's (health_store.series) instead of two texts in every row and index, its timestamps'
-- written offsets two small integers, and its payload only
-- what those columns do not rebuild (health_store.full_payload, 10_rules.sql, gives back the
-- object as sent). health_store.samples becomes a view over them with the columns it had, so
-- every reader keeps its shape. Origins are enum types.
--
-- The old table is kept as health_store.samples_0080 until health_store.after_migrate has
-- moved each person's rows into the new one with the compaction rule of the current
-- definitions (task compact_samples), in this same transaction, and then dropped. Every view
-- is dropped here and made again by the repeatable files, over the new table.

-- Where a held sample came from (health_store.origin_rank decides between two copies of one
-- uuid) and where a delivery came from; hae is Health Auto Export's.
CREATE TYPE health_store.sample_origin AS ENUM ('healthd', 'stridee', 'export', 'hae');
CREATE TYPE health_store.delivery_origin AS ENUM ('http', 'file', 'export', 'hae');

-- A person's series: one integer per type and source held, what samples and their indexes
-- store. Numbered from 1 per person by the write path, under the person lock.
CREATE TABLE health_store.series (
  person  text NOT NULL,
  series  integer NOT NULL,
  type    text NOT NULL,
  source  text NOT NULL,
  PRIMARY KEY (person, series),
  UNIQUE (person, type, source)
);
COMMENT ON TABLE health_store.series IS
  'One row per person, sample type and source held: the integer health_store.sample_rows stores for the pair.';

INSERT INTO health_store.series (person, series, type, source)
SELECT k.person, row_number() OVER (PARTITION BY k.person ORDER BY k.type COLLATE "C", k.source COLLATE "C"), k.type, k.source
FROM (SELECT DISTINCT s.person, s.type, s.source FROM health_store.samples s) k;

-- Every view (the repeatable files make them again) and what the old write path passed around.
DO $$
DECLARE
  v record;
BEGIN
  FOR v IN SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname IN ('health', 'health_store') AND c.relkind = 'v'
  LOOP
    EXECUTE format('DROP VIEW IF EXISTS %I.%I CASCADE', v.nspname, v.relname);
  END LOOP;
END
$$;
DROP TYPE IF EXISTS health_store.incoming_sample CASCADE;
ALTER TABLE health_store.samples RENAME TO samples_0080;

-- Fixed-width columns first, so rows pack without padding.
CREATE TABLE health_store.sample_rows (
  person            text NOT NULL,
  uuid              uuid NOT NULL,
  start_at          timestamptz NOT NULL,
  end_at            timestamptz NOT NULL,
  value             double precision,
  first_received_at timestamptz NOT NULL,
  last_received_at  timestamptz NOT NULL,
  export_id         uuid,
  series            integer NOT NULL,
  day               date NOT NULL,
  origin            health_store.sample_origin NOT NULL,
  start_offset      smallint,
  end_offset        smallint,
  coalesced         boolean NOT NULL DEFAULT false,
  duration_s        double precision,
  distance_m        double precision,
  energy_kcal       double precision,
  activity_type     integer,
  deleted_at        timestamptz,
  deleted_by_export timestamptz,
  kind              text NOT NULL,
  grp               text NOT NULL,
  unit              text,
  category_name     text,
  activity_name     text,
  id                text NOT NULL,
  payload           jsonb,
  PRIMARY KEY (person, uuid),
  CONSTRAINT sample_rows_deleted_pair CHECK ((deleted_at IS NULL) = (deleted_by_export IS NULL))
);

COMMENT ON TABLE health_store.sample_rows IS
  'One row per sample held (the latest copy per person and uuid), compact: read it through health_store.samples, which gives type, source and the payload as sent.';
COMMENT ON COLUMN health_store.sample_rows.series IS 'The sample''s type and source (health_store.series).';
COMMENT ON COLUMN health_store.sample_rows.day IS
  'Local date of start (sleep: of end) in the person''s time zone, or in the sample''s written offset when none is set. Stored at write time so views never convert.';
COMMENT ON COLUMN health_store.sample_rows.start_offset IS
  'Minutes east of UTC written in start, when start was written in the reference''s shape (2026-08-21T10:25:30.000+02:00); NULL otherwise (the text is then in payload).';
COMMENT ON COLUMN health_store.sample_rows.end_offset IS 'The same for end.';
COMMENT ON COLUMN health_store.sample_rows.id IS 'The sample''s content fingerprint as sent (healthd: 64 hex digits); repeats by design, never a key.';
COMMENT ON COLUMN health_store.sample_rows.payload IS
  'What of the sample as sent the columns do not rebuild (health_store.full_payload); NULL when they rebuild all of it.';
COMMENT ON COLUMN health_store.sample_rows.coalesced IS
  'True for a sample of rule total that is a coalescing: it covers two or more samples of its own source that add up to its value, and counts in no total.';
COMMENT ON COLUMN health_store.sample_rows.deleted_at IS
  'When reconciling an export marked the sample deleted in Health (no record of that export matched it); NULL while Health holds it.';
COMMENT ON COLUMN health_store.sample_rows.deleted_by_export IS
  'ExportDate of the export that did not hold the sample; NULL while Health holds it.';

ALTER TABLE health_store.migration_tasks DROP CONSTRAINT IF EXISTS migration_tasks_task_check,
  ADD CONSTRAINT migration_tasks_task_check CHECK (task IN ('rebuild_rollups', 'refresh_derived', 'compact_samples'));
INSERT INTO health_store.migration_tasks (task, person)
SELECT DISTINCT 'compact_samples', s.person FROM health_store.samples_0080 s;

-- A sample by its uuid: the primary key. Rollup upkeep and the coalescing rule read one
-- series by start (and a day's samples of it by the day bounds a start range gives).
CREATE INDEX sample_rows_series_start ON health_store.sample_rows (person, series, start_at);
CREATE INDEX sample_rows_series_day ON health_store.sample_rows (person, series, day);
-- The newest sample end of a person, when a replaced or deleted sample may move it back.
CREATE INDEX sample_rows_end ON health_store.sample_rows (person, end_at);
-- Workouts are few; the workout list and its overlap check read only them.
CREATE INDEX sample_rows_workouts ON health_store.sample_rows (person, start_at) WHERE kind = 'workout';
-- The few samples longer than an hour, which may cover a new one though they started long before.
CREATE INDEX sample_rows_long_spans ON health_store.sample_rows (person, series, start_at)
  WHERE end_at - start_at > interval '1 hour';
-- Imported samples, which a pushed twin replaces (and one probe tells whether there are any).
CREATE INDEX sample_rows_export_twins ON health_store.sample_rows (person, start_at) WHERE origin = 'export';
-- The few samples marked deleted, for health.deleted_samples.
CREATE INDEX sample_rows_deleted ON health_store.sample_rows (person, deleted_at) WHERE deleted_at IS NOT NULL;

-- Origins as enums elsewhere too.
ALTER TABLE health_store.deliveries DROP CONSTRAINT IF EXISTS deliveries_origin_check;
ALTER TABLE health_store.deliveries ALTER COLUMN origin TYPE health_store.delivery_origin
  USING origin::health_store.delivery_origin;
ALTER TABLE health_store.workout_routes DROP CONSTRAINT IF EXISTS workout_routes_origin_check;
ALTER TABLE health_store.workout_routes ALTER COLUMN origin TYPE health_store.sample_origin
  USING origin::health_store.sample_origin;

-- The keys of a sample the write path reads, each as the text sent (a number's digits as
-- written, so 42.50 stays 42.50): health_store.typed_samples types them once, and
-- compact_payload compares them with what the typed columns give back.
CREATE TYPE health_store.sent_fields AS (
  uuid text, id text, type text, "group" text, source text, start text, "end" text, kind text,
  value text, unit text, name text, "activityType" text, "activityName" text,
  "durationSeconds" text, "distanceMeters" text, "activeEnergyKilocalories" text
);
COMMENT ON TYPE health_store.sent_fields IS
  'The keys of a sample the write path types, each as the text sent (jsonb_populate_record of the sample object).';

-- A batch's sample as the write path reads it once (health_store.incoming_samples): its
-- typed columns, the payload it will store, what is held under its uuid, and its twins
-- (the held samples it is by the twins rule: for an imported record the pushed samples it
-- is, for a pushed sample the imported ones it replaces).
CREATE TYPE health_store.incoming_sample AS (
  uuid          uuid,
  type          text,
  source        text,
  grp           text,
  kind          text,
  start_at      timestamptz,
  end_at        timestamptz,
  start_offset  smallint,
  end_offset    smallint,
  day           date,
  value         double precision,
  unit          text,
  category_name text,
  activity_type integer,
  activity_name text,
  duration_s    double precision,
  distance_m    double precision,
  energy_kcal   double precision,
  id            text,
  payload       jsonb,
  is_total      boolean,
  held          boolean,
  changed       boolean,
  old_origin    health_store.sample_origin,
  old_day       date,
  old_type      text,
  old_source    text,
  old_start_at  timestamptz,
  old_end_at    timestamptz,
  old_is_total  boolean,
  old_deleted   boolean,
  twins         uuid[],
  twin_sources  text[],
  action        text
);
COMMENT ON TYPE health_store.incoming_sample IS
  'A sample of a batch as the write path reads it once: typed columns, the payload to store, the held copy of its uuid, and its twins with their sources.';

-- What writing samples changed, for the one step that keeps everything derived right
-- (health_store.apply_sample_changes): rollup keys to recompute, samples only added to other
-- keys, spans of rule total written or removed (the coalescing rule), the latest end written,
-- and whether the person's newest end may have moved back (something replaced, revived,
-- removed or marked).
CREATE TYPE health_store.sample_changes AS (
  keys            health_store.rollup_key[],
  added           health_store.added_samples[],
  spans           health_store.span[],
  newest          timestamptz,
  newest_may_fall boolean
);
COMMENT ON TYPE health_store.sample_changes IS
  'What a write of samples changed: keys to recompute, samples added per key, spans for the coalescing rule, the latest end written, whether the newest end may have moved back.';
