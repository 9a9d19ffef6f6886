-- Per-day rollups behind the health views, and the rule data they are made from.
--
-- Three levels, each a pure function of the one below it, all kept inside the batch
-- transaction for exactly the keys a batch touched (migration 0011; a key that only gained
-- samples has its level-1 row merged with the added samples' instead of recomputed):
--
--   health_store.samples          one row per sample held
--     └ rollup_source             per person, type, day, source: counts, sums, stages, ranks
--         └ rollup_day_type       per person, type, day: the day value by the type's rule
--             └ rollup_day        per person, day: the daily_summary row
--
-- Sums are kept as numeric (each value rounded to the 15 significant digits PostgreSQL's
-- float8-to-numeric cast keeps), so a sum never depends on the order rows were read in, the
-- sums of two sets of samples add up to the sum of both, and a recompute is equal to the
-- stored rollup to the last digit.

-- Rules as data: what each catalog rule does, so views join by rule instead of naming types.
CREATE TABLE health_store.rules (
  rule               text PRIMARY KEY,
  -- One source's total wins the day (total, sleep); the others are alternatives.
  per_source_winner  boolean NOT NULL,
  -- Unit of the day value when it is not the samples' own unit (sleep: minutes asleep).
  day_unit           text,
  description        text NOT NULL
);

INSERT INTO health_store.rules (rule, per_source_winner, day_unit, description) VALUES
  ('total',   true,  NULL,  'Sum of value per source; the source with the largest sum wins the day.'),
  ('sleep',   true,  'min', 'Minutes asleep (stages marked asleep) per source, on the day of waking; the source with the most wins.'),
  ('reading', false, NULL,  'Each sample is a reading: min, mean and max of value across sources, and the count.'),
  ('latest',  false, NULL,  'The latest sample of the day by start (ties: latest end, then source, then uuid), any source.'),
  ('workout', false, NULL,  'Each sample is a workout: count, duration, and distance and energy over the workouts that carry them.');

COMMENT ON TABLE health_store.rules IS
  'What each catalog rule does with a day''s samples; the views join it by rule.';

-- Sleep analysis values of the reference; a value not listed here is an unknown stage.
CREATE TABLE health_store.sleep_stages (
  value      integer PRIMARY KEY,
  name       text NOT NULL UNIQUE,
  is_asleep  boolean NOT NULL
);

INSERT INTO health_store.sleep_stages (value, name, is_asleep) VALUES
  (0, 'inBed',             false),
  (1, 'asleepUnspecified', true),
  (2, 'awake',             false),
  (3, 'asleepCore',        true),
  (4, 'asleepDeep',        true),
  (5, 'asleepREM',         true);

COMMENT ON TABLE health_store.sleep_stages IS
  'Sleep analysis category values of healthd v1 and whether each counts as asleep; any other value is an unknown stage.';

-- Level 1: one row per person, type, day and source with at least one sample.
CREATE TABLE health_store.rollup_source (
  person           text NOT NULL,
  type             text NOT NULL,
  day              date NOT NULL,
  source           text NOT NULL,
  -- Copied from the catalog and its rule when the row is made (NULL: a type not in the
  -- catalog), so daily_source_totals reads this table alone.
  rule             text,
  per_source_winner boolean NOT NULL,
  metric           text,
  unit             text,                      -- unit of total (sleep: min)
  kind             text NOT NULL,             -- least kind seen (types normally have one)
  samples          bigint NOT NULL,           -- every sample of the key
  n_values         bigint NOT NULL,           -- samples carrying a typed value
  sum_value        numeric,
  min_value        double precision,
  max_value        double precision,
  first_start_at   timestamptz NOT NULL,
  last_start_at    timestamptz NOT NULL,
  -- The source's day total for rules total (sum of value) and sleep (minutes asleep).
  total            numeric,
  -- Rule latest: this source's latest sample (start desc, end desc, uuid asc).
  latest_start_at  timestamptz,
  latest_end_at    timestamptz,
  latest_value     double precision,
  latest_uuid      uuid,
  -- Rule sleep: seconds asleep (the stages sleep_stages marks asleep; total is this / 60),
  -- seconds per stage, and of values with no known stage.
  asleep_s         numeric,
  in_bed_s         numeric,
  unspecified_s    numeric,
  awake_s          numeric,
  core_s           numeric,
  deep_s           numeric,
  rem_s            numeric,
  unknown_s        numeric,
  -- Rule workout: count and sums (distance, energy NULL when no workout carries them).
  workouts         bigint,
  duration_s       numeric,
  distance_m       numeric,
  energy_kcal      numeric,
  -- Rules total and sleep: 1 for the day's winning source, then 2, 3, … (from
  -- rollup_day_type.ranked_sources).
  rank             integer,
  PRIMARY KEY (person, type, day, source)
)
-- Room on each page, so a refresh can update a row in place (a HOT update, no new index
-- entries): no column of this table's indexes changes when a key is refreshed.
WITH (fillfactor = 70);
-- daily_source_totals reads one person's per-source rows by day.
CREATE INDEX rollup_source_winners ON health_store.rollup_source (person, day) WHERE per_source_winner;

COMMENT ON TABLE health_store.rollup_source IS
  'Rollup level 1: per person, type, local day and source, the aggregates of the samples held; kept by refresh_batch_rollups inside each batch.';

-- Level 2: one row per person, type and day with at least one sample.
CREATE TABLE health_store.rollup_day_type (
  person           text NOT NULL,
  type             text NOT NULL,
  day              date NOT NULL,
  -- Copied from the catalog and its rule when the row is made (NULL: a type not in the
  -- catalog), so the views read one table instead of joining the catalog on every row.
  rule             text,
  per_source_winner boolean NOT NULL,
  metric           text,
  unit             text,                      -- unit of the day value (sleep: min)
  kind             text NOT NULL,
  samples          bigint NOT NULL,
  n_values         bigint NOT NULL,
  first_start_at   timestamptz NOT NULL,
  last_start_at    timestamptz NOT NULL,
  -- The day value by the type's rule: the winner's total (total, sleep), the mean
  -- (reading), the latest value (latest); NULL for workouts and unknown types.
  value            double precision,
  -- The winning source (total, sleep) or the latest sample's source (latest).
  source           text,
  alternatives     jsonb,                     -- total, sleep: {source: total} of the others
  ranked_sources   text[],                    -- total, sleep: every source, winner first
  min_value        double precision,
  max_value        double precision,
  measured_at      timestamptz,               -- latest: the start of the latest sample
  -- Sleep: the winning source's minutes per stage.
  asleep_min       double precision,
  core_min         double precision,
  deep_min         double precision,
  rem_min          double precision,
  unspecified_min  double precision,
  awake_min        double precision,
  in_bed_min       double precision,
  unknown_min      double precision,
  -- Workouts.
  workouts         bigint,
  duration_s       double precision,
  distance_m       double precision,
  energy_kcal      double precision,
  PRIMARY KEY (person, type, day)
);
-- The daily_summary pivot reads every type of one day.
CREATE INDEX rollup_day_type_person_day ON health_store.rollup_day_type (person, day);
-- Each per-day view reads one rule's rows of one person in day order; the busiest ones
-- straight from their index (an index-only scan, no sort, no visit to the wide rows).
CREATE INDEX rollup_day_type_winners ON health_store.rollup_day_type (person, day, type)
  INCLUDE (metric, unit, value, source, alternatives) WHERE per_source_winner;
CREATE INDEX rollup_day_type_sleep ON health_store.rollup_day_type (person, day)
  INCLUDE (source, asleep_min, core_min, deep_min, rem_min, unspecified_min, awake_min, in_bed_min, unknown_min, alternatives)
  WHERE rule = 'sleep';
CREATE INDEX rollup_day_type_readings ON health_store.rollup_day_type (person, day, type)
  INCLUDE (metric, unit, min_value, value, max_value, n_values) WHERE rule = 'reading';
CREATE INDEX rollup_day_type_latest ON health_store.rollup_day_type (person, day, type) WHERE rule = 'latest';
CREATE INDEX rollup_day_type_workouts ON health_store.rollup_day_type (person, day) WHERE rule = 'workout';
CREATE INDEX rollup_day_type_unknown ON health_store.rollup_day_type (person, type) WHERE rule IS NULL;

COMMENT ON TABLE health_store.rollup_day_type IS
  'Rollup level 2: per person, type and local day, the day value by the type''s rule (winners with alternatives, readings, latest, workouts), made from rollup_source.';

-- Level 3: one row per person and day with any sample: daily_summary without is_partial.
CREATE TABLE health_store.rollup_day (
  person                    text NOT NULL,
  day                       date NOT NULL,
  steps                     double precision,
  distance_m                double precision,
  flights_climbed           double precision,
  active_energy_kcal        double precision,
  basal_energy_kcal         double precision,
  exercise_min              double precision,
  stand_min                 double precision,
  sleep_min                 double precision,
  heart_rate_min            double precision,
  heart_rate_mean           double precision,
  heart_rate_max            double precision,
  resting_heart_rate        double precision,
  walking_heart_rate        double precision,
  hrv_sdnn_ms               double precision,
  oxygen_saturation_pct     double precision,
  respiratory_rate          double precision,
  vo2_max                   double precision,
  body_temperature_c        double precision,
  blood_pressure_systolic   double precision,
  blood_pressure_diastolic  double precision,
  body_mass_kg              double precision,
  height_m                  double precision,
  body_mass_index           double precision,
  body_fat_pct              double precision,
  lean_body_mass_kg         double precision,
  workouts                  bigint,
  workout_duration_s        double precision,
  unknown_samples           bigint,
  PRIMARY KEY (person, day)
)
WITH (fillfactor = 70);

COMMENT ON TABLE health_store.rollup_day IS
  'Rollup level 3: per person and local day with any sample, the daily_summary values, pivoted from rollup_day_type.';

-- The planner needs to know the rule tables are tiny (autovacuum never analyzes 24 rows).
ANALYZE health_store.catalog;
ANALYZE health_store.rules;
ANALYZE health_store.sleep_stages;
