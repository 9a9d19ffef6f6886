-- How each rollup level is made, and the functions that keep, rebuild and verify them.
--
-- Level 1 is defined once, by health_store.source_rollup: the row of one (person, type, day,
-- source) key made from a set of its samples. Levels 2 and 3 are each one view over the
-- level below (calc_day_type, calc_day). The refresh, the rebuild and the verification all
-- go through these, so there is one definition of every number. Filtering a calc view on its
-- key columns reaches the index below it (the filter is pushed under the GROUP BY or the
-- window), so a refresh reads only the keys it was given.
--
-- Refreshing a key upserts its new row and skips the write when nothing changed; a key left
-- without samples loses its row. A key that only gained samples in a batch is not read again:
-- its stored level-1 row is merged with source_rollup of the added samples
-- (merge_source_rollups), which gives exactly the row a recompute would. Every refresh runs
-- under the person lock (store_batch and the settings functions take it), so two writers of
-- one person never refresh at once and a rollup always equals a recompute of the committed
-- samples.

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
         g.asleep_s, g.in_bed_s, g.unspecified_s, g.awake_s, g.core_s, g.deep_s, g.rem_s, g.unknown_s,
         g.workouts, g.duration_s, g.distance_m, g.energy_kcal,
         NULL::integer
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
         coalesce(a.asleep_s + b.asleep_s, a.asleep_s, b.asleep_s),
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
         a.rank
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

-- Level 2 from level 1. Per-source winner (rules total and sleep): a fixed priority first
-- (listed sources before unlisted), then the largest total, then the source that sorts first
-- in byte order; rank 1 wins, the others are the alternatives.
CREATE VIEW health_store.calc_day_type AS
WITH r AS (
  SELECT r.*,
         row_number() OVER (PARTITION BY r.person, r.type, r.day
                            ORDER BY array_position(p.sources, r.source) NULLS LAST,
                                     r.total DESC NULLS LAST,
                                     r.source COLLATE "C") AS day_rank
  FROM health_store.rollup_source r
  LEFT JOIN health_store.source_priorities p ON p.person = r.person AND p.type = r.type
),
g AS (
  -- rule, per_source_winner, metric and unit were copied from the catalog into level 1.
  SELECT r.person, r.type, r.day,
         min(r.rule) AS rule,
         bool_or(r.per_source_winner) AS per_source_winner,
         min(r.metric) AS metric,
         min(r.unit) AS unit,
         min(r.kind) AS kind,
         sum(r.samples)::bigint AS samples,
         sum(r.n_values)::bigint AS n_values,
         min(r.first_start_at) AS first_start_at,
         max(r.last_start_at) AS last_start_at,
         sum(r.sum_value) AS sum_value,
         min(r.min_value) AS min_value,
         max(r.max_value) AS max_value,
         -- The winner's row (rank 1); max() only picks the one value there is.
         max(r.source) FILTER (WHERE r.day_rank = 1) AS winner,
         max(r.total) FILTER (WHERE r.day_rank = 1) AS winner_total,
         jsonb_object_agg(r.source, r.total::double precision) FILTER (WHERE r.day_rank > 1) AS alternatives,
         max(r.in_bed_s) FILTER (WHERE r.day_rank = 1) AS in_bed_s,
         max(r.unspecified_s) FILTER (WHERE r.day_rank = 1) AS unspecified_s,
         max(r.awake_s) FILTER (WHERE r.day_rank = 1) AS awake_s,
         max(r.core_s) FILTER (WHERE r.day_rank = 1) AS core_s,
         max(r.deep_s) FILTER (WHERE r.day_rank = 1) AS deep_s,
         max(r.rem_s) FILTER (WHERE r.day_rank = 1) AS rem_s,
         max(r.unknown_s) FILTER (WHERE r.day_rank = 1) AS unknown_s,
         array_agg(r.source ORDER BY r.day_rank) AS ranked_sources,
         sum(r.workouts)::bigint AS workouts,
         sum(r.duration_s) AS duration_s,
         sum(r.distance_m) AS distance_m,
         sum(r.energy_kcal) AS energy_kcal
  FROM r
  GROUP BY r.person, r.type, r.day
)
SELECT g.person, g.type, g.day, g.rule, g.per_source_winner, g.metric, g.unit, g.kind, g.samples,
       g.n_values, g.first_start_at, g.last_start_at,
       CASE WHEN g.per_source_winner THEN g.winner_total::double precision
            WHEN g.rule = 'reading' THEN (g.sum_value / nullif(g.n_values, 0))::double precision
            WHEN g.rule = 'latest' THEN l.latest_value
       END AS value,
       CASE WHEN g.per_source_winner THEN g.winner
            WHEN g.rule = 'latest' THEN l.source
       END AS source,
       CASE WHEN g.per_source_winner THEN coalesce(g.alternatives, '{}'::jsonb) END AS alternatives,
       CASE WHEN g.per_source_winner THEN g.ranked_sources END AS ranked_sources,
       g.min_value, g.max_value,
       l.latest_start_at AS measured_at,
       CASE WHEN g.rule = 'sleep' THEN g.winner_total::double precision END AS asleep_min,
       CASE WHEN g.rule = 'sleep' THEN (coalesce(g.core_s, 0) / 60)::double precision END AS core_min,
       CASE WHEN g.rule = 'sleep' THEN (coalesce(g.deep_s, 0) / 60)::double precision END AS deep_min,
       CASE WHEN g.rule = 'sleep' THEN (coalesce(g.rem_s, 0) / 60)::double precision END AS rem_min,
       CASE WHEN g.rule = 'sleep' THEN (coalesce(g.unspecified_s, 0) / 60)::double precision END AS unspecified_min,
       CASE WHEN g.rule = 'sleep' THEN (coalesce(g.awake_s, 0) / 60)::double precision END AS awake_min,
       CASE WHEN g.rule = 'sleep' THEN (coalesce(g.in_bed_s, 0) / 60)::double precision END AS in_bed_min,
       CASE WHEN g.rule = 'sleep' THEN (coalesce(g.unknown_s, 0) / 60)::double precision END AS unknown_min,
       CASE WHEN g.rule = 'workout' THEN g.workouts END AS workouts,
       CASE WHEN g.rule = 'workout' THEN g.duration_s::double precision END AS duration_s,
       CASE WHEN g.rule = 'workout' THEN g.distance_m::double precision END AS distance_m,
       CASE WHEN g.rule = 'workout' THEN g.energy_kcal::double precision END AS energy_kcal
FROM g
-- Rule latest: the latest sample across sources: start desc, end desc, source asc (byte
-- order), uuid asc — each source's own latest is already in level 1.
LEFT JOIN LATERAL (
  SELECT r.latest_value, r.latest_start_at, r.source
  FROM health_store.rollup_source r
  WHERE g.rule = 'latest'
    AND r.person = g.person AND r.type = g.type AND r.day = g.day AND r.latest_start_at IS NOT NULL
  ORDER BY r.latest_start_at DESC, r.latest_end_at DESC, r.source COLLATE "C", r.latest_uuid
  LIMIT 1
) l ON true;

COMMENT ON VIEW health_store.calc_day_type IS
  'Rollup level 2 computed from rollup_source: the day value of each person, type and day by the type''s rule.';

-- Level 3 from level 2: the one place that names the daily_summary metrics.
CREATE VIEW health_store.calc_day AS
SELECT d.person, d.day,
       max(d.value) FILTER (WHERE d.metric = 'steps') AS steps,
       max(d.value) FILTER (WHERE d.metric = 'distance_m') AS distance_m,
       max(d.value) FILTER (WHERE d.metric = 'flights_climbed') AS flights_climbed,
       max(d.value) FILTER (WHERE d.metric = 'active_energy_kcal') AS active_energy_kcal,
       max(d.value) FILTER (WHERE d.metric = 'basal_energy_kcal') AS basal_energy_kcal,
       max(d.value) FILTER (WHERE d.metric = 'exercise_min') AS exercise_min,
       max(d.value) FILTER (WHERE d.metric = 'stand_min') AS stand_min,
       max(d.value) FILTER (WHERE d.metric = 'sleep_min') AS sleep_min,
       max(d.min_value) FILTER (WHERE d.metric = 'heart_rate_bpm') AS heart_rate_min,
       max(d.value) FILTER (WHERE d.metric = 'heart_rate_bpm') AS heart_rate_mean,
       max(d.max_value) FILTER (WHERE d.metric = 'heart_rate_bpm') AS heart_rate_max,
       max(d.value) FILTER (WHERE d.metric = 'resting_heart_rate_bpm') AS resting_heart_rate,
       max(d.value) FILTER (WHERE d.metric = 'walking_heart_rate_bpm') AS walking_heart_rate,
       max(d.value) FILTER (WHERE d.metric = 'hrv_sdnn_ms') AS hrv_sdnn_ms,
       100 * max(d.value) FILTER (WHERE d.metric = 'oxygen_saturation_fraction') AS oxygen_saturation_pct,
       max(d.value) FILTER (WHERE d.metric = 'respiratory_rate_per_min') AS respiratory_rate,
       max(d.value) FILTER (WHERE d.metric = 'vo2_max_ml_per_kg_min') AS vo2_max,
       max(d.value) FILTER (WHERE d.metric = 'body_temperature_c') AS body_temperature_c,
       max(d.value) FILTER (WHERE d.metric = 'blood_pressure_systolic_mmhg') AS blood_pressure_systolic,
       max(d.value) FILTER (WHERE d.metric = 'blood_pressure_diastolic_mmhg') AS blood_pressure_diastolic,
       max(d.value) FILTER (WHERE d.metric = 'body_mass_kg') AS body_mass_kg,
       max(d.value) FILTER (WHERE d.metric = 'height_m') AS height_m,
       max(d.value) FILTER (WHERE d.metric = 'body_mass_index') AS body_mass_index,
       100 * max(d.value) FILTER (WHERE d.metric = 'body_fat_fraction') AS body_fat_pct,
       max(d.value) FILTER (WHERE d.metric = 'lean_body_mass_kg') AS lean_body_mass_kg,
       max(d.workouts) FILTER (WHERE d.metric = 'workouts') AS workouts,
       max(d.duration_s) FILTER (WHERE d.metric = 'workouts') AS workout_duration_s,
       sum(d.samples) FILTER (WHERE d.rule IS NULL)::bigint AS unknown_samples
FROM health_store.rollup_day_type d
GROUP BY d.person, d.day;

COMMENT ON VIEW health_store.calc_day IS
  'Rollup level 3 computed from rollup_day_type: the daily_summary pivot, the only place its metrics are named (as health.catalog.metric).';

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
CREATE FUNCTION health_store.refresh_day_types(p_person text, p_days date[], p_types text[])
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
CREATE OR REPLACE FUNCTION health_store.refresh_batch_rollups(p_person text, p_days date[], p_types text[], p_sources text[],
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

-- Levels 2 and 3 of one person from level 1, for one type (NULL: every type).
-- Caller holds the person lock.
CREATE FUNCTION health_store.refresh_person_derived(p_person text, p_type text)
RETURNS void LANGUAGE plpgsql
SET jit = off
AS $$
DECLARE
  v_days  date[];
  v_types text[];
BEGIN
  IF p_type IS NOT NULL THEN
    -- One type (a source priority changed): every day it has or had.
    SELECT array_agg(x.day), array_agg(p_type) INTO v_days, v_types FROM (
      SELECT r.day FROM health_store.rollup_source r WHERE r.person = p_person AND r.type = p_type
      UNION SELECT d.day FROM health_store.rollup_day_type d WHERE d.person = p_person AND d.type = p_type) x;
    IF v_days IS NOT NULL THEN
      PERFORM health_store.refresh_day_types(p_person, v_days, v_types);
    END IF;
    RETURN;
  END IF;

  DELETE FROM health_store.rollup_day WHERE person = p_person;
  DELETE FROM health_store.rollup_day_type WHERE person = p_person;
  INSERT INTO health_store.rollup_day_type (
    person, type, day, rule, per_source_winner, metric, unit, kind, samples, n_values,
    first_start_at, last_start_at, value, source, alternatives, ranked_sources, min_value,
    max_value, measured_at, asleep_min, core_min, deep_min, rem_min, unspecified_min, awake_min,
    in_bed_min, unknown_min, workouts, duration_s, distance_m, energy_kcal)
  SELECT v.person, v.type, v.day, v.rule, v.per_source_winner, v.metric, v.unit, v.kind,
         v.samples, v.n_values, v.first_start_at, v.last_start_at, v.value, v.source,
         v.alternatives, v.ranked_sources, v.min_value, v.max_value, v.measured_at,
         v.asleep_min, v.core_min, v.deep_min, v.rem_min, v.unspecified_min, v.awake_min,
         v.in_bed_min, v.unknown_min, v.workouts, v.duration_s, v.distance_m, v.energy_kcal
  FROM health_store.calc_day_type v
  WHERE v.person = p_person
  -- Day-major, as batches arriving in time order leave them: the views read by day.
  ORDER BY v.day, v.type;

  UPDATE health_store.rollup_source r SET rank = array_position(d.ranked_sources, r.source)
  FROM health_store.rollup_day_type d
  WHERE d.person = p_person AND r.person = p_person AND r.type = d.type AND r.day = d.day
    AND r.rank IS DISTINCT FROM array_position(d.ranked_sources, r.source);

  INSERT INTO health_store.rollup_day (
    person, day, steps, distance_m, flights_climbed, active_energy_kcal, basal_energy_kcal,
    exercise_min, stand_min, sleep_min, heart_rate_min, heart_rate_mean, heart_rate_max,
    resting_heart_rate, walking_heart_rate, hrv_sdnn_ms, oxygen_saturation_pct,
    respiratory_rate, vo2_max, body_temperature_c, blood_pressure_systolic,
    blood_pressure_diastolic, body_mass_kg, height_m, body_mass_index, body_fat_pct,
    lean_body_mass_kg, workouts, workout_duration_s, unknown_samples)
  SELECT v.person, v.day, v.steps, v.distance_m, v.flights_climbed, v.active_energy_kcal,
         v.basal_energy_kcal, v.exercise_min, v.stand_min, v.sleep_min, v.heart_rate_min,
         v.heart_rate_mean, v.heart_rate_max, v.resting_heart_rate, v.walking_heart_rate,
         v.hrv_sdnn_ms, v.oxygen_saturation_pct, v.respiratory_rate, v.vo2_max,
         v.body_temperature_c, v.blood_pressure_systolic, v.blood_pressure_diastolic,
         v.body_mass_kg, v.height_m, v.body_mass_index, v.body_fat_pct, v.lean_body_mass_kg,
         v.workouts, v.workout_duration_s, v.unknown_samples
  FROM health_store.calc_day v WHERE v.person = p_person
  ORDER BY v.day;
END
$$;

COMMENT ON FUNCTION health_store.refresh_person_derived(text, text) IS
  'Recomputes levels 2 and 3 of one person for one type (NULL: every type) from rollup_source, e.g. after a source priority changed. Caller holds the person lock.';

-- Every rollup of one person (or of everyone, with NULL) from scratch.
CREATE FUNCTION health_store.rebuild_rollups(p_person text DEFAULT NULL)
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

-- Every difference between one person's stored rollups and a recompute. Empty when equal.
--
-- Level 1 is compared with a recompute from the samples; level 2 with a recompute from the
-- stored level 1, each source's rank with the stored level 2, level 3 with a recompute from
-- the stored level 2. All empty means, level by level, that every stored rollup equals a
-- recompute from the samples alone.
CREATE FUNCTION health_store.verify_rollups(p_person text)
RETURNS TABLE (level text, day date, type text, source text, stored jsonb, recomputed jsonb)
LANGUAGE sql STABLE
SET work_mem = '256MB'
AS $$
  WITH stored_source AS (
    SELECT r.type, r.day, r.source, to_jsonb(r) - 'rank' AS j
    FROM health_store.rollup_source r WHERE r.person = p_person
  ),
  -- Each source's rank against the day's ranking.
  rank_drift AS (
    SELECT r.type, r.day, r.source, jsonb_build_object('rank', r.rank) AS stored,
           jsonb_build_object('rank', array_position(d.ranked_sources, r.source)) AS recomputed
    FROM health_store.rollup_source r
    LEFT JOIN health_store.rollup_day_type d ON d.person = r.person AND d.type = r.type AND d.day = r.day
    WHERE r.person = p_person AND r.rank IS DISTINCT FROM array_position(d.ranked_sources, r.source)
  ),
  calc_source AS (
    SELECT v.type, v.day, v.source, to_jsonb(v) AS j
    FROM health_store.calc_source v WHERE v.person = p_person
  ),
  stored_day_type AS (
    SELECT d.type, d.day, to_jsonb(d) AS j FROM health_store.rollup_day_type d WHERE d.person = p_person
  ),
  calc_day_type AS (
    SELECT v.type, v.day, to_jsonb(v) AS j FROM health_store.calc_day_type v WHERE v.person = p_person
  ),
  stored_day AS (
    SELECT d.day, to_jsonb(d) AS j FROM health_store.rollup_day d WHERE d.person = p_person
  ),
  calc_day AS (
    SELECT v.day, to_jsonb(v) AS j FROM health_store.calc_day v WHERE v.person = p_person
  )
  SELECT 'source', coalesce(a.day, b.day), coalesce(a.type, b.type), coalesce(a.source, b.source), a.j, b.j
  FROM stored_source a FULL JOIN calc_source b ON a.type = b.type AND a.day = b.day AND a.source = b.source
  WHERE a.j IS DISTINCT FROM b.j
  UNION ALL
  SELECT 'rank', x.day, x.type, x.source, x.stored, x.recomputed FROM rank_drift x
  UNION ALL
  SELECT 'day_type', coalesce(a.day, b.day), coalesce(a.type, b.type), NULL, a.j, b.j
  FROM stored_day_type a FULL JOIN calc_day_type b ON a.type = b.type AND a.day = b.day
  WHERE a.j IS DISTINCT FROM b.j
  UNION ALL
  SELECT 'day', coalesce(a.day, b.day), NULL, NULL, a.j, b.j
  FROM stored_day a FULL JOIN calc_day b ON a.day = b.day
  WHERE a.j IS DISTINCT FROM b.j
  ORDER BY 1, 2, 3, 4
$$;

COMMENT ON FUNCTION health_store.verify_rollups(text) IS
  'Lists every difference between one person''s stored rollups and a recompute (level, key, stored row, recomputed row); no rows means they are equal.';

REVOKE EXECUTE ON FUNCTION
  health_store.source_rollup(text, text, date, text, health_store.sample_facts[]),
  health_store.merge_source_rollups(health_store.rollup_source, health_store.rollup_source),
  health_store.refresh_rollups(text, date[], text[], text[]),
  health_store.refresh_batch_rollups(text, date[], text[], text[], health_store.added_samples[]),
  health_store.refresh_day_types(text, date[], text[]),
  health_store.refresh_person_derived(text, text),
  health_store.rebuild_rollups(text),
  health_store.verify_rollups(text)
FROM PUBLIC;

-- Samples stored before this migration get their rollups now.
SELECT health_store.rebuild_rollups();
