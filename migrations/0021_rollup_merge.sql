-- Rollup upkeep proportional to what a batch added, not to what a key already holds.
--
-- Until now every (day, type, source) key a batch touched was recomputed from all of its
-- samples, and each source's rank was written by a statement joined to the touched pairs,
-- whose cached generic plan (made on a session's first batch, when the tables look empty)
-- could hash every level-1 row of the person on every batch. Now:
--
--   * Level 1 is defined once, by health_store.source_rollup: the row of one key made from a
--     set of its samples. calc_source applies it to every key's samples held.
--   * A key that only gained samples in a batch is not read again: store_batch hands
--     refresh_batch_rollups the samples it inserted there, and their own level-1 row is
--     merged into the stored one (merge_source_rollups). Sums are exact decimals, so the
--     merged row equals a recompute to the last digit; verify_rollups still checks that.
--   * A key a replaced sample left or joined is recomputed from the samples, as before.
--   * Ranks are written one (day, type) pair at a time, which can only be an index scan.
--
-- Level 1 gains asleep_s (seconds asleep), so a sleep total can be merged exactly. Existing
-- rollups are rebuilt at the end of this migration.

-- What the rollups read of one stored sample (level 1 aggregates these columns).
CREATE TYPE health_store.sample_facts AS (
  kind text, value double precision, start_at timestamptz, end_at timestamptz, uuid uuid,
  activity_type integer, duration_s double precision, distance_m double precision,
  energy_kcal double precision
);

-- The samples a batch inserted into one rollup key (day, type, source).
CREATE TYPE health_store.added_samples AS (
  day date, type text, source text, samples health_store.sample_facts[]
);

-- Rule sleep: seconds asleep (the stages sleep_stages marks asleep); total is this / 60.
ALTER TABLE health_store.rollup_source ADD COLUMN asleep_s numeric;

COMMENT ON TABLE health_store.rollup_source IS
  'Rollup level 1: per person, type, local day and source, the aggregates of the samples held; kept by refresh_batch_rollups inside each batch.';

-- A level-1 key's total by its rule: the exact sum of value (total) or minutes asleep (sleep).
CREATE FUNCTION health_store.source_total(p_rule text, p_sum_value numeric, p_asleep_s numeric)
RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE p_rule WHEN 'total' THEN p_sum_value WHEN 'sleep' THEN p_asleep_s / 60 END $$;

-- Level 1 of one key from a set of its samples: the one definition of every level-1 column
-- (rank aside, which level 2 sets). calc_source applies it to every sample held; a batch
-- applies it to the samples it added and merges the result into the stored row. No row for
-- an empty set.
--
-- Sums are exact: each value counts as the decimal PostgreSQL's float8-to-numeric cast makes
-- of it (15 significant digits), added without rounding, so a sum does not depend on the
-- order rows are read in, sums of two sets add up to the sum of both, and a recompute equals
-- the stored rollup to the last digit. Values below 10^9 with at most six decimals (nearly
-- all) are added as whole micro-units in bigint, the exact same decimal and far cheaper than
-- the cast; the rest as numeric.
--
-- One pass over the samples gives every aggregate; what only some rules need (sleep stages,
-- workout sums) is filtered by the rule, so other rules pay nothing for it, and the latest
-- sample is looked up only for rule latest. A SQL function without SET clauses, so callers
-- get it inlined into their own plan.
CREATE FUNCTION health_store.source_rollup(p_person text, p_type text, p_day date, p_source text,
                                           p_samples health_store.sample_facts[])
RETURNS SETOF health_store.rollup_source
LANGUAGE sql STABLE
AS $$
  SELECT p_person, p_type, p_day, p_source, c.rule, coalesce(ru.per_source_winner, false),
         c.metric, coalesce(ru.day_unit, c.unit), g.kind, g.samples, g.n_values, g.sum_value,
         g.min_value, g.max_value, g.first_start_at, g.last_start_at,
         health_store.source_total(c.rule, g.sum_value, g.asleep_s),
         l.start_at, l.end_at, l.value, l.uuid,
         g.in_bed_s, g.unspecified_s, g.awake_s, g.core_s, g.deep_s, g.rem_s, g.unknown_s,
         g.workouts, g.duration_s, g.distance_m, g.energy_kcal,
         NULL::integer,  -- rank: set by level 2
         g.asleep_s      -- the table's column order: asleep_s was added last
  FROM (SELECT p_type AS type) t
  LEFT JOIN health_store.catalog c ON c.type = t.type
  LEFT JOIN health_store.rules ru ON ru.rule = c.rule
  CROSS JOIN LATERAL (
    SELECT min(s.kind) AS kind,
           count(*) AS samples,
           count(s.value) AS n_values,
           CASE WHEN count(s.value) > 0 THEN
             -- Values with at most six decimals (nearly all): exact sums of whole micro-units.
             coalesce(sum(round(s.value * 1000000)::bigint)
                        FILTER (WHERE abs(s.value) < 1e9 AND round(s.value * 1000000) / 1000000 = s.value) * 0.000001, 0)
             + coalesce(sum(s.value::numeric)
                        FILTER (WHERE NOT (abs(s.value) < 1e9 AND round(s.value * 1000000) / 1000000 = s.value)), 0)
           END AS sum_value,
           min(s.value) AS min_value,
           max(s.value) AS max_value,
           min(s.start_at) AS first_start_at,
           max(s.start_at) AS last_start_at,
           -- Rule sleep: seconds per stage (sleep_stages says which are asleep), unknown
           -- values apart.
           CASE WHEN c.rule = 'sleep' THEN
             coalesce(sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE st.is_asleep), 0)
           END AS asleep_s,
           sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE st.name = 'inBed') AS in_bed_s,
           sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE st.name = 'asleepUnspecified') AS unspecified_s,
           sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE st.name = 'awake') AS awake_s,
           sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE st.name = 'asleepCore') AS core_s,
           sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE st.name = 'asleepDeep') AS deep_s,
           sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE st.name = 'asleepREM') AS rem_s,
           sum(extract(epoch FROM s.end_at - s.start_at))
             FILTER (WHERE c.rule = 'sleep' AND st.value IS NULL AND s.value IS NOT NULL) AS unknown_s,
           -- Rule workout: count and sums; distance and energy stay NULL when no workout
           -- carries them.
           CASE WHEN c.rule = 'workout' THEN count(s.activity_type) END AS workouts,
           sum(s.duration_s::numeric) FILTER (WHERE c.rule = 'workout') AS duration_s,
           sum(s.distance_m::numeric) FILTER (WHERE c.rule = 'workout') AS distance_m,
           sum(s.energy_kcal::numeric) FILTER (WHERE c.rule = 'workout') AS energy_kcal
    FROM unnest(p_samples) s
    LEFT JOIN health_store.sleep_stages st ON c.rule = 'sleep' AND st.value = s.value
    HAVING count(*) > 0
  ) g
  -- Rule latest: the source's latest sample with a value (start desc, end desc, uuid asc;
  -- merge_source_rollups picks between two keys' latest by the same order).
  LEFT JOIN LATERAL (
    SELECT s.start_at, s.end_at, s.value, s.uuid
    FROM unnest(p_samples) s
    WHERE c.rule = 'latest' AND s.value IS NOT NULL
    ORDER BY s.start_at DESC, s.end_at DESC, s.uuid
    LIMIT 1
  ) l ON true
$$;

COMMENT ON FUNCTION health_store.source_rollup(text, text, date, text, health_store.sample_facts[]) IS
  'Rollup level 1 of one person, type, day and source made from a set of its samples (no row for none): the one definition of a level-1 row, used by calc_source and by the batch merge.';

-- Level 1 of one key from two disjoint sets of its samples: a (the stored row, or NULL when
-- the key has none) and b (source_rollup of samples just added). Equal, column by column, to
-- source_rollup of both sets: counts and exact sums add (a sum stays NULL while neither set
-- has a summand), min and max take the extremes, the latest sample is the later of the two
-- by source_rollup's order, and the total follows from the merged sums. Keeps a's rank.
CREATE FUNCTION health_store.merge_source_rollups(a health_store.rollup_source, b health_store.rollup_source)
RETURNS SETOF health_store.rollup_source
LANGUAGE sql STABLE
AS $$
  SELECT b.person, b.type, b.day, b.source, b.rule, b.per_source_winner, b.metric, b.unit,
         least(a.kind, b.kind),
         coalesce(a.samples + b.samples, b.samples),
         coalesce(a.n_values + b.n_values, b.n_values),
         coalesce(a.sum_value + b.sum_value, a.sum_value, b.sum_value),
         least(a.min_value, b.min_value),
         greatest(a.max_value, b.max_value),
         least(a.first_start_at, b.first_start_at),
         greatest(a.last_start_at, b.last_start_at),
         health_store.source_total(b.rule, coalesce(a.sum_value + b.sum_value, a.sum_value, b.sum_value),
                                   coalesce(a.asleep_s + b.asleep_s, a.asleep_s, b.asleep_s)),
         l.start_at, l.end_at, l.value, l.uuid,
         coalesce(a.in_bed_s + b.in_bed_s, a.in_bed_s, b.in_bed_s),
         coalesce(a.unspecified_s + b.unspecified_s, a.unspecified_s, b.unspecified_s),
         coalesce(a.awake_s + b.awake_s, a.awake_s, b.awake_s),
         coalesce(a.core_s + b.core_s, a.core_s, b.core_s),
         coalesce(a.deep_s + b.deep_s, a.deep_s, b.deep_s),
         coalesce(a.rem_s + b.rem_s, a.rem_s, b.rem_s),
         coalesce(a.unknown_s + b.unknown_s, a.unknown_s, b.unknown_s),
         coalesce(a.workouts + b.workouts, a.workouts, b.workouts),
         coalesce(a.duration_s + b.duration_s, a.duration_s, b.duration_s),
         coalesce(a.distance_m + b.distance_m, a.distance_m, b.distance_m),
         coalesce(a.energy_kcal + b.energy_kcal, a.energy_kcal, b.energy_kcal),
         a.rank,
         coalesce(a.asleep_s + b.asleep_s, a.asleep_s, b.asleep_s)
  FROM (SELECT 1) one
  LEFT JOIN LATERAL (
    SELECT x.start_at, x.end_at, x.value, x.uuid
    FROM (VALUES (a.latest_start_at, a.latest_end_at, a.latest_value, a.latest_uuid),
                 (b.latest_start_at, b.latest_end_at, b.latest_value, b.latest_uuid)) AS x (start_at, end_at, value, uuid)
    WHERE x.start_at IS NOT NULL
    ORDER BY x.start_at DESC, x.end_at DESC, x.uuid
    LIMIT 1
  ) l ON true
$$;

COMMENT ON FUNCTION health_store.merge_source_rollups(health_store.rollup_source, health_store.rollup_source) IS
  'Rollup level 1 of one key from its stored row (or NULL) and source_rollup of samples added to it: equal to source_rollup of all of them.';

-- Level 1 of every key held, from the samples: source_rollup of each key's samples. The key
-- columns come from the grouping, so a filter on them reaches the index
-- samples(person, type, day, source) and the rows arrive grouped.
-- Replaced: level 1 now comes from source_rollup (nothing else depends on this view).
DROP VIEW health_store.calc_source;
CREATE VIEW health_store.calc_source AS
SELECT g.person, g.type, g.day, g.source, r.rule, r.per_source_winner, r.metric, r.unit, r.kind,
       r.samples, r.n_values, r.sum_value, r.min_value, r.max_value, r.first_start_at,
       r.last_start_at, r.total, r.latest_start_at, r.latest_end_at, r.latest_value,
       r.latest_uuid, r.asleep_s, r.in_bed_s, r.unspecified_s, r.awake_s, r.core_s, r.deep_s,
       r.rem_s, r.unknown_s, r.workouts, r.duration_s, r.distance_m, r.energy_kcal
FROM (
  SELECT s.person, s.type, s.day, s.source,
         array_agg(ROW(s.kind, s.value, s.start_at, s.end_at, s.uuid, s.activity_type, s.duration_s,
                       s.distance_m, s.energy_kcal)::health_store.sample_facts) AS samples
  FROM health_store.samples s
  GROUP BY s.person, s.type, s.day, s.source
) g
CROSS JOIN LATERAL health_store.source_rollup(g.person, g.type, g.day, g.source, g.samples) r;

COMMENT ON VIEW health_store.calc_source IS
  'Rollup level 1 computed straight from health_store.samples (source_rollup of each key''s samples): what refresh, rebuild and verify compare with and write.';

-- Refreshing runs as one statement per level, each reading the level below as the previous
-- statement left it; deletes of keys left without data ride along in the same statement.
-- Each asks its calc view one key at a time, in a LATERAL subquery kept apart with OFFSET 0:
-- the key's equality conditions are pushed under the view's GROUP BY (or window) into an
-- index scan of exactly that key. (Joined or `= ANY` conditions are not: the view would be
-- computed for every key of the person.) Stored rows are read and ranks written the same
-- way, key by key. Plans are generic (the statements are keyed the same way every time) and
-- never JIT-compiled: a plan over a few keys can look costly enough to be compiled, and
-- compiling costs more than running it. A generic plan is made on a session's first call,
-- often when the tables are still empty; only a per-key index scan stays right as they grow.

-- Levels 2 and 3 for the given (day, type) pairs of one person, after level 1 changed: the
-- day values and each source's rank, then the days' summary rows. Caller holds the person lock.
CREATE OR REPLACE FUNCTION health_store.refresh_day_types(p_person text, p_days date[], p_types text[])
RETURNS void LANGUAGE plpgsql
SET jit = off
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_day    date;
  v_type   text;
  v_ranked text[];
BEGIN
  WITH k AS (
    SELECT DISTINCT u.day, u.type FROM unnest(p_days, p_types) AS u(day, type)
  ),
  x AS (
    SELECT v.* FROM k
    CROSS JOIN LATERAL (SELECT v.* FROM health_store.calc_day_type v
                        WHERE v.person = p_person AND v.type = k.type AND v.day = k.day OFFSET 0) v
  ),
  -- A pair left without level 1 rows has no data any more: no row.
  gone AS (
    DELETE FROM health_store.rollup_day_type d USING k
    WHERE d.person = p_person AND d.type = k.type AND d.day = k.day
      AND NOT EXISTS (SELECT 1 FROM x WHERE x.type = k.type AND x.day = k.day)
  )
  INSERT INTO health_store.rollup_day_type AS t (
    person, type, day, rule, per_source_winner, metric, unit, kind, samples, n_values,
    first_start_at, last_start_at, value, source, alternatives, ranked_sources, min_value,
    max_value, measured_at, asleep_min, core_min, deep_min, rem_min, unspecified_min, awake_min,
    in_bed_min, unknown_min, workouts, duration_s, distance_m, energy_kcal)
  SELECT x.person, x.type, x.day, x.rule, x.per_source_winner, x.metric, x.unit, x.kind,
         x.samples, x.n_values, x.first_start_at, x.last_start_at, x.value, x.source,
         x.alternatives, x.ranked_sources, x.min_value, x.max_value, x.measured_at,
         x.asleep_min, x.core_min, x.deep_min, x.rem_min, x.unspecified_min, x.awake_min,
         x.in_bed_min, x.unknown_min, x.workouts, x.duration_s, x.distance_m, x.energy_kcal
  FROM x
  ON CONFLICT (person, type, day) DO UPDATE SET
    rule = excluded.rule, per_source_winner = excluded.per_source_winner,
    metric = excluded.metric, unit = excluded.unit, kind = excluded.kind,
    samples = excluded.samples, n_values = excluded.n_values,
    first_start_at = excluded.first_start_at, last_start_at = excluded.last_start_at,
    value = excluded.value, source = excluded.source, alternatives = excluded.alternatives,
    ranked_sources = excluded.ranked_sources, min_value = excluded.min_value,
    max_value = excluded.max_value, measured_at = excluded.measured_at,
    asleep_min = excluded.asleep_min, core_min = excluded.core_min,
    deep_min = excluded.deep_min, rem_min = excluded.rem_min,
    unspecified_min = excluded.unspecified_min, awake_min = excluded.awake_min,
    in_bed_min = excluded.in_bed_min, unknown_min = excluded.unknown_min,
    workouts = excluded.workouts, duration_s = excluded.duration_s,
    distance_m = excluded.distance_m, energy_kcal = excluded.energy_kcal
  -- Unchanged rows are not rewritten.
  WHERE (t.rule, t.per_source_winner, t.metric, t.unit, t.kind, t.samples, t.n_values,
          t.first_start_at, t.last_start_at, t.value, t.source, t.alternatives,
          t.ranked_sources, t.min_value, t.max_value, t.measured_at, t.asleep_min, t.core_min,
          t.deep_min, t.rem_min, t.unspecified_min, t.awake_min, t.in_bed_min, t.unknown_min,
          t.workouts, t.duration_s, t.distance_m, t.energy_kcal)
    IS DISTINCT FROM (excluded.rule, excluded.per_source_winner, excluded.metric, excluded.unit,
          excluded.kind, excluded.samples, excluded.n_values, excluded.first_start_at,
          excluded.last_start_at, excluded.value, excluded.source, excluded.alternatives,
          excluded.ranked_sources, excluded.min_value, excluded.max_value, excluded.measured_at,
          excluded.asleep_min, excluded.core_min, excluded.deep_min, excluded.rem_min,
          excluded.unspecified_min, excluded.awake_min, excluded.in_bed_min,
          excluded.unknown_min, excluded.workouts, excluded.duration_s, excluded.distance_m,
          excluded.energy_kcal);

  -- Each source's rank (rules total and sleep), from the day's ranking just written: one
  -- statement per (day, type) pair, which can only be an index scan of that pair. (Joined
  -- to the pairs instead, the cached plan can hash every level 1 row of the person: it is
  -- made on the first batch, when the tables look empty.)
  FOR v_day, v_type, v_ranked IN
    SELECT d.day, d.type, d.ranked_sources
    FROM (SELECT DISTINCT u.day, u.type FROM unnest(p_days, p_types) AS u(day, type)) k
    CROSS JOIN LATERAL (SELECT d.day, d.type, d.ranked_sources FROM health_store.rollup_day_type d
                        WHERE d.person = p_person AND d.type = k.type AND d.day = k.day
                          AND d.per_source_winner
                        OFFSET 0) d
  LOOP
    UPDATE health_store.rollup_source r SET rank = array_position(v_ranked, r.source)
    WHERE r.person = p_person AND r.type = v_type AND r.day = v_day
      AND r.rank IS DISTINCT FROM array_position(v_ranked, r.source);
  END LOOP;

  WITH k AS (
    SELECT DISTINCT u.day FROM unnest(p_days) AS u(day)
  ),
  x AS (
    SELECT v.* FROM k
    CROSS JOIN LATERAL (SELECT v.* FROM health_store.calc_day v
                        WHERE v.person = p_person AND v.day = k.day OFFSET 0) v
  ),
  gone AS (
    DELETE FROM health_store.rollup_day d USING k
    WHERE d.person = p_person AND d.day = k.day
      AND NOT EXISTS (SELECT 1 FROM x WHERE x.day = k.day)
  )
  INSERT INTO health_store.rollup_day AS t (
    person, day, steps, distance_m, flights_climbed, active_energy_kcal, basal_energy_kcal,
    exercise_min, stand_min, sleep_min, heart_rate_min, heart_rate_mean, heart_rate_max,
    resting_heart_rate, walking_heart_rate, hrv_sdnn_ms, oxygen_saturation_pct,
    respiratory_rate, vo2_max, body_temperature_c, blood_pressure_systolic,
    blood_pressure_diastolic, body_mass_kg, height_m, body_mass_index, body_fat_pct,
    lean_body_mass_kg, workouts, workout_duration_s, unknown_samples)
  SELECT x.person, x.day, x.steps, x.distance_m, x.flights_climbed, x.active_energy_kcal,
         x.basal_energy_kcal, x.exercise_min, x.stand_min, x.sleep_min, x.heart_rate_min,
         x.heart_rate_mean, x.heart_rate_max, x.resting_heart_rate, x.walking_heart_rate,
         x.hrv_sdnn_ms, x.oxygen_saturation_pct, x.respiratory_rate, x.vo2_max,
         x.body_temperature_c, x.blood_pressure_systolic, x.blood_pressure_diastolic,
         x.body_mass_kg, x.height_m, x.body_mass_index, x.body_fat_pct, x.lean_body_mass_kg,
         x.workouts, x.workout_duration_s, x.unknown_samples
  FROM x
  ON CONFLICT (person, day) DO UPDATE SET
    steps = excluded.steps, distance_m = excluded.distance_m,
    flights_climbed = excluded.flights_climbed,
    active_energy_kcal = excluded.active_energy_kcal,
    basal_energy_kcal = excluded.basal_energy_kcal, exercise_min = excluded.exercise_min,
    stand_min = excluded.stand_min, sleep_min = excluded.sleep_min,
    heart_rate_min = excluded.heart_rate_min, heart_rate_mean = excluded.heart_rate_mean,
    heart_rate_max = excluded.heart_rate_max, resting_heart_rate = excluded.resting_heart_rate,
    walking_heart_rate = excluded.walking_heart_rate, hrv_sdnn_ms = excluded.hrv_sdnn_ms,
    oxygen_saturation_pct = excluded.oxygen_saturation_pct,
    respiratory_rate = excluded.respiratory_rate, vo2_max = excluded.vo2_max,
    body_temperature_c = excluded.body_temperature_c,
    blood_pressure_systolic = excluded.blood_pressure_systolic,
    blood_pressure_diastolic = excluded.blood_pressure_diastolic,
    body_mass_kg = excluded.body_mass_kg, height_m = excluded.height_m,
    body_mass_index = excluded.body_mass_index, body_fat_pct = excluded.body_fat_pct,
    lean_body_mass_kg = excluded.lean_body_mass_kg, workouts = excluded.workouts,
    workout_duration_s = excluded.workout_duration_s, unknown_samples = excluded.unknown_samples
  -- Unchanged rows are not rewritten.
  WHERE (t.steps, t.distance_m, t.flights_climbed, t.active_energy_kcal, t.basal_energy_kcal,
          t.exercise_min, t.stand_min, t.sleep_min, t.heart_rate_min, t.heart_rate_mean,
          t.heart_rate_max, t.resting_heart_rate, t.walking_heart_rate, t.hrv_sdnn_ms,
          t.oxygen_saturation_pct, t.respiratory_rate, t.vo2_max, t.body_temperature_c,
          t.blood_pressure_systolic, t.blood_pressure_diastolic, t.body_mass_kg, t.height_m,
          t.body_mass_index, t.body_fat_pct, t.lean_body_mass_kg, t.workouts,
          t.workout_duration_s, t.unknown_samples)
    IS DISTINCT FROM (excluded.steps, excluded.distance_m, excluded.flights_climbed,
          excluded.active_energy_kcal, excluded.basal_energy_kcal, excluded.exercise_min,
          excluded.stand_min, excluded.sleep_min, excluded.heart_rate_min,
          excluded.heart_rate_mean, excluded.heart_rate_max, excluded.resting_heart_rate,
          excluded.walking_heart_rate, excluded.hrv_sdnn_ms, excluded.oxygen_saturation_pct,
          excluded.respiratory_rate, excluded.vo2_max, excluded.body_temperature_c,
          excluded.blood_pressure_systolic, excluded.blood_pressure_diastolic,
          excluded.body_mass_kg, excluded.height_m, excluded.body_mass_index,
          excluded.body_fat_pct, excluded.lean_body_mass_kg, excluded.workouts,
          excluded.workout_duration_s, excluded.unknown_samples);
END
$$;

COMMENT ON FUNCTION health_store.refresh_day_types(text, date[], text[]) IS
  'Recomputes level 2 (rollup_day_type) and the ranks of the given (day, type) pairs of one person from rollup_source, then level 3 (rollup_day) of their days. Caller holds the person lock.';

-- The rollups after one batch of one person, then everything derived from them. store_batch
-- calls it in the batch's transaction, holding the person lock, with
--   p_days, p_types, p_sources  the keys to recompute from the samples: every key a replaced
--                               sample left or joined (NULL: none)
--   p_added                     per key, the samples the batch inserted into every other key
--                               it touched (NULL: none; never a key to recompute): those keys
--                               only gained samples, so their stored row is merged with
--                               source_rollup of the added samples instead of reading all of
--                               the key's samples again.
-- Level 1 is one statement for both kinds of key; then levels 2 and 3 for every (day, type)
-- touched.
CREATE FUNCTION health_store.refresh_batch_rollups(p_person text, p_days date[], p_types text[], p_sources text[],
                                                              p_added health_store.added_samples[])
RETURNS void LANGUAGE plpgsql
SET jit = off
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_days  date[];
  v_types text[];
BEGIN
  IF coalesce(cardinality(p_days), 0) = 0 AND coalesce(cardinality(p_added), 0) = 0 THEN
    RETURN;
  END IF;

  WITH k AS (
    SELECT DISTINCT u.day, u.type, u.source FROM unnest(p_days, p_types, p_sources) AS u(day, type, source)
  ),
  x AS (
    SELECT v.* FROM k
    CROSS JOIN LATERAL (SELECT v.* FROM health_store.calc_source v
                        WHERE v.person = p_person AND v.type = k.type AND v.day = k.day AND v.source = k.source
                        OFFSET 0) v
    UNION ALL
    -- The stored row (none for a new key) merged with the added samples' own row.
    SELECT m.person, m.type, m.day, m.source, m.rule, m.per_source_winner, m.metric, m.unit,
           m.kind, m.samples, m.n_values, m.sum_value, m.min_value, m.max_value,
           m.first_start_at, m.last_start_at, m.total, m.latest_start_at, m.latest_end_at,
           m.latest_value, m.latest_uuid, m.asleep_s, m.in_bed_s, m.unspecified_s, m.awake_s,
           m.core_s, m.deep_s, m.rem_s, m.unknown_s, m.workouts, m.duration_s, m.distance_m,
           m.energy_kcal
    FROM unnest(p_added) AS a
    CROSS JOIN LATERAL health_store.source_rollup(p_person, a.type, a.day, a.source, a.samples) n
    -- One index probe per key. (A join could hash every level 1 row of the person.)
    LEFT JOIN LATERAL (SELECT t AS stored FROM health_store.rollup_source t
                       WHERE t.person = p_person AND t.type = a.type AND t.day = a.day AND t.source = a.source
                       OFFSET 0) t ON true
    CROSS JOIN LATERAL health_store.merge_source_rollups(t.stored, n) m
  ),
  -- A key whose last sample moved away (a replaced sample) has no data any more: no row.
  gone AS (
    DELETE FROM health_store.rollup_source r USING k
    WHERE r.person = p_person AND r.type = k.type AND r.day = k.day AND r.source = k.source
      AND NOT EXISTS (SELECT 1 FROM x WHERE x.type = k.type AND x.day = k.day AND x.source = k.source)
  )
  INSERT INTO health_store.rollup_source AS t (
    person, type, day, source, rule, per_source_winner, metric, unit, kind, samples, n_values,
    sum_value, min_value, max_value, first_start_at, last_start_at, total, latest_start_at,
    latest_end_at, latest_value, latest_uuid, asleep_s, in_bed_s, unspecified_s, awake_s,
    core_s, deep_s, rem_s, unknown_s, workouts, duration_s, distance_m, energy_kcal)
  SELECT x.person, x.type, x.day, x.source, x.rule, x.per_source_winner, x.metric, x.unit,
         x.kind, x.samples, x.n_values, x.sum_value, x.min_value, x.max_value, x.first_start_at,
         x.last_start_at, x.total, x.latest_start_at, x.latest_end_at, x.latest_value,
         x.latest_uuid, x.asleep_s, x.in_bed_s, x.unspecified_s, x.awake_s, x.core_s, x.deep_s,
         x.rem_s, x.unknown_s, x.workouts, x.duration_s, x.distance_m, x.energy_kcal
  FROM x
  ON CONFLICT (person, type, day, source) DO UPDATE SET
    rule = excluded.rule, per_source_winner = excluded.per_source_winner,
    metric = excluded.metric, unit = excluded.unit, kind = excluded.kind,
    samples = excluded.samples, n_values = excluded.n_values, sum_value = excluded.sum_value,
    min_value = excluded.min_value, max_value = excluded.max_value,
    first_start_at = excluded.first_start_at, last_start_at = excluded.last_start_at,
    total = excluded.total, latest_start_at = excluded.latest_start_at,
    latest_end_at = excluded.latest_end_at, latest_value = excluded.latest_value,
    latest_uuid = excluded.latest_uuid, asleep_s = excluded.asleep_s,
    in_bed_s = excluded.in_bed_s, unspecified_s = excluded.unspecified_s,
    awake_s = excluded.awake_s, core_s = excluded.core_s, deep_s = excluded.deep_s,
    rem_s = excluded.rem_s, unknown_s = excluded.unknown_s, workouts = excluded.workouts,
    duration_s = excluded.duration_s, distance_m = excluded.distance_m,
    energy_kcal = excluded.energy_kcal
  -- Unchanged rows are not rewritten.
  WHERE (t.rule, t.per_source_winner, t.metric, t.unit, t.kind, t.samples, t.n_values,
          t.sum_value, t.min_value, t.max_value, t.first_start_at, t.last_start_at, t.total,
          t.latest_start_at, t.latest_end_at, t.latest_value, t.latest_uuid, t.asleep_s,
          t.in_bed_s, t.unspecified_s, t.awake_s, t.core_s, t.deep_s, t.rem_s, t.unknown_s,
          t.workouts, t.duration_s, t.distance_m, t.energy_kcal)
    IS DISTINCT FROM (excluded.rule, excluded.per_source_winner, excluded.metric, excluded.unit,
          excluded.kind, excluded.samples, excluded.n_values, excluded.sum_value,
          excluded.min_value, excluded.max_value, excluded.first_start_at,
          excluded.last_start_at, excluded.total, excluded.latest_start_at,
          excluded.latest_end_at, excluded.latest_value, excluded.latest_uuid,
          excluded.asleep_s, excluded.in_bed_s, excluded.unspecified_s, excluded.awake_s,
          excluded.core_s, excluded.deep_s, excluded.rem_s, excluded.unknown_s,
          excluded.workouts, excluded.duration_s, excluded.distance_m, excluded.energy_kcal);

  -- Levels 2 and 3 of every (day, type) either kind of key touched.
  SELECT array_agg(d.day), array_agg(d.type) INTO v_days, v_types FROM (
    SELECT u.day, u.type FROM unnest(p_days, p_types) AS u(day, type)
    UNION
    SELECT a.day, a.type FROM unnest(p_added) AS a) d;
  PERFORM health_store.refresh_day_types(p_person, v_days, v_types);
END
$$;

COMMENT ON FUNCTION health_store.refresh_batch_rollups(text, date[], text[], text[], health_store.added_samples[]) IS
  'Refreshes the rollups after one batch of one person: the given (day, type, source) keys recomputed from the samples, the keys that only gained samples merged from their stored row and the added samples, then the day values and summary rows derived from them. Called by store_batch under the person lock.';

-- The rollups of the given (day, type, source) keys of one person, recomputed from the
-- samples, then everything derived from them. For writers that move samples between keys
-- (set_time_zone); the caller holds the person lock.
CREATE OR REPLACE FUNCTION health_store.refresh_rollups(p_person text, p_days date[], p_types text[], p_sources text[])
RETURNS void LANGUAGE plpgsql
AS $$
BEGIN
  PERFORM health_store.refresh_batch_rollups(p_person, p_days, p_types, p_sources, NULL);
END
$$;

COMMENT ON FUNCTION health_store.refresh_rollups(text, date[], text[], text[]) IS
  'Recomputes the rollups of the given (day, type, source) keys of one person from the samples, and the day values and summary rows derived from them. Caller holds the person lock.';

-- Every rollup of one person (or of everyone, with NULL) from scratch; now with asleep_s.
CREATE OR REPLACE FUNCTION health_store.rebuild_rollups(p_person text DEFAULT NULL)
RETURNS void LANGUAGE plpgsql
SET work_mem = '256MB'
AS $$
DECLARE
  v_person text;
BEGIN
  FOR v_person IN
    SELECT DISTINCT x.person FROM (
      SELECT s.person FROM health_store.samples s WHERE p_person IS NULL
      UNION SELECT r.person FROM health_store.rollup_source r WHERE p_person IS NULL
      UNION SELECT p_person WHERE p_person IS NOT NULL) x
    ORDER BY x.person
  LOOP
    PERFORM health_store.lock_person(v_person);
    DELETE FROM health_store.rollup_day WHERE person = v_person;
    DELETE FROM health_store.rollup_day_type WHERE person = v_person;
    DELETE FROM health_store.rollup_source WHERE person = v_person;

    INSERT INTO health_store.rollup_source (
      person, type, day, source, rule, per_source_winner, metric, unit, kind, samples, n_values,
      sum_value, min_value, max_value, first_start_at, last_start_at, total, latest_start_at,
      latest_end_at, latest_value, latest_uuid, asleep_s, in_bed_s, unspecified_s, awake_s,
      core_s, deep_s, rem_s, unknown_s, workouts, duration_s, distance_m, energy_kcal)
    SELECT v.person, v.type, v.day, v.source, v.rule, v.per_source_winner, v.metric, v.unit,
           v.kind, v.samples, v.n_values, v.sum_value, v.min_value, v.max_value,
           v.first_start_at, v.last_start_at, v.total, v.latest_start_at, v.latest_end_at,
           v.latest_value, v.latest_uuid, v.asleep_s, v.in_bed_s, v.unspecified_s, v.awake_s, v.core_s,
           v.deep_s, v.rem_s, v.unknown_s, v.workouts, v.duration_s, v.distance_m, v.energy_kcal
    FROM health_store.calc_source v WHERE v.person = v_person
    ORDER BY v.day, v.type, v.source;

    PERFORM health_store.refresh_person_derived(v_person, NULL);
  END LOOP;
END
$$;

COMMENT ON FUNCTION health_store.rebuild_rollups(text) IS
  'Rebuilds every rollup of one person (NULL: of everyone) from health_store.samples, under the person lock.';

-- store_batch now tells the rollups which keys only gained samples, and which samples.
-- Stores one validated batch in the caller's transaction and returns its counts.
--
-- p_envelope  the batch's envelope keys as sent (exportId, generatedAt, batchSequence,
--             isFinalBatch, basis, windowStart, windowEnd, occasionStart, occasionEnd)
-- p_samples   JSON array of the valid samples, each the exact object sent (or built from a
--             CSV row); validated by the caller, so every cast below succeeds
-- p_quarantine JSON array of {position, reason, raw} for the samples that broke the contract
CREATE OR REPLACE FUNCTION health_store.store_batch(
  p_person       text,
  p_origin       text,
  p_format       text,
  p_file         text,
  p_envelope     jsonb,
  p_samples      jsonb,
  p_quarantine   jsonb,
  p_body_sha256  bytea,
  p_received_at  timestamptz DEFAULT clock_timestamp()
) RETURNS TABLE (samples integer, inserted integer, duplicates integer, replaced integer, quarantined integer)
LANGUAGE plpgsql
AS $$
DECLARE
  v_tz          text;
  v_valid       integer := jsonb_array_length(p_samples);
  v_quarantined integer := jsonb_array_length(p_quarantine);
  v_inserted    integer;
  v_replaced    integer;
  v_days        date[];
  v_types       text[];
  v_sources     text[];
  v_added       health_store.added_samples[];
  v_delivery    bigint;
  v_export      uuid := (p_envelope->>'exportId')::uuid;
BEGIN
  PERFORM health_store.lock_person(p_person);
  SELECT s.time_zone INTO v_tz FROM health_store.settings s WHERE s.person = p_person;

  -- Every writer of a person's samples holds that person's lock (taken above), so nobody else
  -- inserts this person's uuids meanwhile: held rows are found by index probes, new ones are
  -- plain inserts and changed ones plain updates, which is much cheaper than an
  -- INSERT … ON CONFLICT over the batch.
  WITH input AS (
    -- One pass over each sample's keys (jsonb_populate_record) instead of an operator per
    -- column; the sample object itself is kept whole as the payload.
    SELECT e.value AS s, e.ordinality AS pos, f.*, c.rule,
           -- Typed columns only for a known type of a known kind; the payload keeps all.
           (c.type IS NOT NULL AND c.kind = f.kind) AS known
    FROM jsonb_array_elements(p_samples) WITH ORDINALITY AS e
    CROSS JOIN LATERAL jsonb_populate_record(NULL::health_store.sample_fields, e.value) AS f
    LEFT JOIN health_store.catalog c ON c.type = f.type
  ),
  -- A uuid repeated inside the batch is stored once: the later copy wins.
  latest AS (
    SELECT DISTINCT ON (uuid) * FROM input ORDER BY uuid, pos DESC
  ),
  typed AS (
    SELECT x.uuid, x.id, x.type, x."group" AS grp, x.kind, x.source,
           x.start::timestamptz AS start_at, x."end"::timestamptz AS end_at,
           health_store.local_day(CASE WHEN x.rule = 'sleep' THEN x."end" ELSE x.start END, v_tz) AS day,
           CASE WHEN x.known AND x.kind IN ('quantity', 'category') THEN x.value::double precision END AS value,
           CASE WHEN x.known AND x.kind = 'quantity' THEN x.unit END AS unit,
           CASE WHEN x.known AND x.kind = 'category' THEN x.name END AS category_name,
           CASE WHEN x.known AND x.kind = 'workout' THEN x."activityType" END AS activity_type,
           CASE WHEN x.known AND x.kind = 'workout' THEN x."activityName" END AS activity_name,
           CASE WHEN x.known AND x.kind = 'workout' THEN x."durationSeconds" END AS duration_s,
           CASE WHEN x.known AND x.kind = 'workout' THEN x."distanceMeters" END AS distance_m,
           CASE WHEN x.known AND x.kind = 'workout' THEN x."activeEnergyKilocalories" END AS energy_kcal,
           x.s AS payload,
           o.uuid IS NOT NULL AS held, o.payload AS old_payload,
           o.day AS old_day, o.type AS old_type, o.source AS old_source
    FROM latest x
    -- One primary-key probe per sample (LATERAL keeps the planner from scanning the
    -- person's rows).
    LEFT JOIN LATERAL (
      SELECT h.uuid, h.payload, h.day, h.type, h.source FROM health_store.samples h
      WHERE h.person = p_person AND h.uuid = x.uuid
    ) AS o ON true
  ),
  inserted AS (
    INSERT INTO health_store.samples (
      person, uuid, id, type, grp, kind, source, start_at, end_at, day,
      value, unit, category_name, activity_type, activity_name,
      duration_s, distance_m, energy_kcal, payload, first_received_at, last_received_at, export_id)
    SELECT p_person, uuid, id, type, grp, kind, source, start_at, end_at, day,
           value, unit, category_name, activity_type, activity_name,
           duration_s, distance_m, energy_kcal, payload, p_received_at, p_received_at, v_export
    FROM typed WHERE NOT held
    ORDER BY uuid
    RETURNING day, type, source, kind, value, start_at, end_at, uuid, activity_type, duration_s,
              distance_m, energy_kcal
  ),
  -- A held uuid with other content: the newer copy replaces the older. The same content
  -- again is a duplicate and the row is not touched.
  replaced AS (
    UPDATE health_store.samples AS t SET
      id = x.id, type = x.type, grp = x.grp, kind = x.kind, source = x.source,
      start_at = x.start_at, end_at = x.end_at, day = x.day, value = x.value, unit = x.unit,
      category_name = x.category_name, activity_type = x.activity_type,
      activity_name = x.activity_name, duration_s = x.duration_s, distance_m = x.distance_m,
      energy_kcal = x.energy_kcal, payload = x.payload, last_received_at = p_received_at,
      export_id = v_export
    FROM typed x
    WHERE x.held AND x.old_payload IS DISTINCT FROM x.payload
      AND t.person = p_person AND t.uuid = x.uuid
    RETURNING t.day, t.type, t.source, x.old_day, x.old_type, x.old_source
  ),
  -- Rollup keys a replaced row left or joined: recomputed from the samples.
  recompute AS (
    SELECT day, type, source FROM replaced
    UNION
    SELECT old_day, old_type, old_source FROM replaced
  )
  SELECT (SELECT count(*) FROM inserted),
         (SELECT count(*) FROM replaced),
         (SELECT array_agg(day ORDER BY day, type, source) FROM recompute),
         (SELECT array_agg(type ORDER BY day, type, source) FROM recompute),
         (SELECT array_agg(source ORDER BY day, type, source) FROM recompute),
         -- Every other key touched only gained samples: the rollups merge these into what
         -- they hold instead of reading the key's samples again.
         (SELECT array_agg(ROW(g.day, g.type, g.source, g.samples)::health_store.added_samples)
          FROM (SELECT i.day, i.type, i.source,
                       array_agg(ROW(i.kind, i.value, i.start_at, i.end_at, i.uuid, i.activity_type,
                                     i.duration_s, i.distance_m, i.energy_kcal)::health_store.sample_facts) AS samples
                FROM inserted i
                WHERE NOT EXISTS (SELECT 1 FROM recompute r
                                  WHERE r.day = i.day AND r.type = i.type AND r.source = i.source)
                GROUP BY i.day, i.type, i.source) g)
  INTO v_inserted, v_replaced, v_days, v_types, v_sources, v_added;

  IF v_days IS NOT NULL OR v_added IS NOT NULL THEN
    PERFORM health_store.refresh_batch_rollups(p_person, v_days, v_types, v_sources, v_added);
  END IF;

  INSERT INTO health_store.deliveries (
    person, received_at, origin, format, export_id, batch_sequence, is_final, basis,
    window_start, window_end, occasion_start, occasion_end, generated_at,
    samples, inserted, duplicates, replaced, quarantined, body_sha256, file)
  VALUES (
    p_person, p_received_at, p_origin, p_format, v_export,
    (p_envelope->>'batchSequence')::integer, (p_envelope->>'isFinalBatch')::boolean,
    p_envelope->>'basis',
    (p_envelope->>'windowStart')::timestamptz, (p_envelope->>'windowEnd')::timestamptz,
    (p_envelope->>'occasionStart')::timestamptz, (p_envelope->>'occasionEnd')::timestamptz,
    (p_envelope->>'generatedAt')::timestamptz,
    v_valid + v_quarantined, v_inserted, v_valid - v_inserted - v_replaced, v_replaced,
    v_quarantined, p_body_sha256, p_file)
  RETURNING delivery_id INTO v_delivery;

  INSERT INTO health_store.quarantine (person, delivery_id, position, reason, raw)
  SELECT p_person, v_delivery, (q->>'position')::integer, q->>'reason', q->>'raw'
  FROM jsonb_array_elements(p_quarantine) AS q;

  RETURN QUERY SELECT v_valid + v_quarantined, v_inserted, v_valid - v_inserted - v_replaced,
                      v_replaced, v_quarantined;
END
$$;

COMMENT ON FUNCTION health_store.store_batch IS
  'Stores one validated healthd batch (samples upserted on person and uuid, a delivery row, quarantined samples, rollups of the touched days) in the caller''s transaction; returns its counts.';

REVOKE EXECUTE ON FUNCTION
  health_store.source_total(text, numeric, numeric),
  health_store.source_rollup(text, text, date, text, health_store.sample_facts[]),
  health_store.merge_source_rollups(health_store.rollup_source, health_store.rollup_source),
  health_store.refresh_batch_rollups(text, date[], text[], text[], health_store.added_samples[])
FROM PUBLIC;

-- Rollups stored before this migration get asleep_s (and are checked against the new
-- definition of level 1 by being remade from it).
SELECT health_store.rebuild_rollups();
